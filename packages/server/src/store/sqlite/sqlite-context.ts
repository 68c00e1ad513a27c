import type { Grant, Principal } from '@bubble/protocol';
import type { LiveBusMessage } from '../../live/live-bus.js';
import type { PutGrant } from '../store.js';
import type { Statements } from './sqlite-statements.js';

/** A write job: runs inside a group commit's transaction, emitting live messages that are published after COMMIT. */
export type SqliteJob<T> = (emit: (message: LiveBusMessage) => void, nowIso: string) => T;

/** What the SQLite store's parts share: its statements, its write queue, its clock and the jobs other parts reuse. */
export interface SqliteStoreContext {
  readonly st: Statements;
  write<T>(job: SqliteJob<T>): Promise<T>;
  now(): Date;
  getPrincipalSync(principalId: string): Principal | null;
  /** Adds (or changes the role of) a grant inside the current job, appending `participant_added` by `system`. */
  grantInJob(
    input: PutGrant,
    emit: (message: LiveBusMessage) => void,
    nowIso: string,
  ): { grant: Grant; change: 'created' | 'role_changed' | 'unchanged' };
}
