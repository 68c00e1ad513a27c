import type { EventEnvelope, Grant, Principal } from '@bubble/protocol';
import { notFound } from '../../errors/bubble-error.js';
import type { PutGrant } from '../store.js';
import { toGrant, toPrincipal, type GrantRow, type PrincipalRow } from '../sqlite/sqlite-rows.js';
import type { WriteJob } from './postgres-group-commit.js';
import type { Reader } from './postgres-pool.js';
import { SQL, type Read } from './postgres-sql.js';
import type { WriteTx } from './postgres-write-tx.js';

/** What the PostgreSQL store's parts share: reads on the pool, the group-commit writer, the clock. */
export interface PostgresStoreContext {
  readonly db: Reader;
  write<T>(job: WriteJob<T>): Promise<T>;
  now(): Date;
}

export const poolRead =
  (db: Reader): Read =>
  (sql, params) =>
    db.query(sql, params);

export const txRead =
  (tx: WriteTx): Read =>
  (sql, params) =>
    tx.read(sql, params);

export async function principalById(read: Read, principalId: string): Promise<Principal | null> {
  const [row] = await read<PrincipalRow>(SQL.principalById, [principalId]);
  return row ? toPrincipal(row) : null;
}

/** Appends one event by `system` inside the current job, returning its envelope. */
export async function appendSystemEvent(
  tx: WriteTx,
  threadId: string,
  type: string,
  data: Record<string, unknown>,
): Promise<EventEnvelope> {
  if ((await tx.head(threadId)) === null) throw notFound(`thread ${threadId} not found`);
  return tx.appendEvent({ threadId, principalId: 'system', type, data, clientEventId: null });
}

/** Adds (or changes the role of) a grant inside the current job, appending `participant_added` by `system`. */
export async function grantInJob(
  tx: WriteTx,
  input: PutGrant,
): Promise<{ grant: Grant; change: 'created' | 'role_changed' | 'unchanged' }> {
  if ((await tx.head(input.threadId)) === null) throw notFound(`thread ${input.threadId} not found`);
  const [existing] = await tx.read<GrantRow>(SQL.liveGrant, [input.threadId, input.principalId]);
  if (existing && (existing.role === input.role || !input.mayChangeRole)) {
    return { grant: toGrant(existing), change: 'unchanged' };
  }
  const event = await appendSystemEvent(tx, input.threadId, 'participant_added', {
    principalId: input.principalId,
    role: input.role,
    by: input.by,
  });
  const { rows } = existing
    ? await tx.write<GrantRow>(SQL.setGrantRole, [input.threadId, input.principalId, input.role])
    : await tx.write<GrantRow>(SQL.insertGrant, [
        input.threadId,
        input.principalId,
        input.role,
        input.by,
        tx.nowIso,
        event.seq,
      ]);
  const grant = toGrant(rows[0]!);
  tx.noteGrant(input.threadId, input.principalId, true);
  tx.emit({ kind: 'events', threadId: input.threadId, events: [event] });
  tx.emit({ kind: 'grant', change: 'added', grant });
  return { grant, change: existing ? 'role_changed' : 'created' };
}
