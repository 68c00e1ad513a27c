import { openPrivateDatabase } from './private-files.js';
import type { EventEnvelope, Grant, Thread } from '@bubble/protocol';
import { conflict, forbidden, notFound } from '../../errors/bubble-error.js';
import { RUN_BOUND_TYPES, type RunState, stepRun } from '../../domain/run-rules.js';
import { isSameEvent } from '../../domain/same-event.js';
import { newEventId } from '../../domain/ids.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import type { AppendInput, AppendResult, BubbleStore, DurableSync, StoreOpenOptions } from '../store.js';
import { GroupCommit } from './group-commit.js';
import { openWalForSync } from './sqlite-wal-sync.js';
import type { SqliteStoreContext } from './sqlite-context.js';
import { invitationMethods } from './sqlite-invitations.js';
import { inviteMethods } from './sqlite-invites.js';
import { peopleMethods } from './sqlite-people.js';
import { prepareDatabase } from './sqlite-schema.js';
import { prepareStatements } from './sqlite-statements.js';
import {
  toArtifact,
  toArtifactMeta,
  toEnvelope,
  toGrant,
  toPrincipal,
  toThread,
  toToken,
  type ArtifactRow,
  type EventRow,
  type GrantRow,
  type PrincipalRow,
  type ThreadRow,
  type TokenRow,
} from './sqlite-rows.js';

/** Not part of the store's options: for this package's tests only. */
export interface SqliteInternals {
  /** Wraps the sync that makes commits durable (`group-commit.ts`), to hold it back or fail it. */
  wrapDurableSync?: (sync: DurableSync) => DurableSync;
}

/** Opens (creating if needed) the SQLite store in the file `path`. */
export async function openSqliteStore(
  path: string,
  options: StoreOpenOptions = {},
  internals: SqliteInternals = {},
): Promise<BubbleStore> {
  const db = openPrivateDatabase(path);
  try {
    prepareDatabase(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const st = prepareStatements(db);
  const now = options.now ?? (() => new Date());
  const onCommit = options.onCommit;
  const wal = openWalForSync(db);
  const sync = wal === null ? undefined : (internals.wrapDurableSync ?? ((s) => s))(wal.sync);
  const writes = new GroupCommit(
    db,
    (messages) => {
      try {
        onCommit?.(messages);
      } catch {
        // A listener's failure must not undo or block a committed write.
      }
    },
    sync,
  );
  /** The durable part of a thread's events: readers never show a seq a power cut could take back. */
  const visibleHead = (threadId: string, head: number): number => {
    const from = writes.pendingFrom(threadId);
    return from === undefined ? head : Math.min(head, from - 1);
  };
  const visibleThread = (row: ThreadRow): Thread => {
    const thread = toThread(row);
    const head = visibleHead(thread.threadId, thread.headSeq);
    return head === thread.headSeq ? thread : { ...thread, headSeq: head };
  };
  const visibleEvents = (threadId: string, rows: EventRow[]): EventRow[] => {
    const from = writes.pendingFrom(threadId);
    return from === undefined ? rows : rows.filter((row) => row.seq < from);
  };
  let closed = false;

  const write = <T>(job: (emit: (m: LiveBusMessage) => void, nowIso: string) => T): Promise<T> => {
    if (closed) return Promise.reject(new Error('store is closed'));
    return writes.enqueue((emit) => job(emit, now().toISOString()));
  };

  /** Appends one event by `system` inside the current job, returning its envelope. */
  const appendSystemEvent = (
    threadId: string,
    type: string,
    data: Record<string, unknown>,
    nowIso: string,
  ): EventEnvelope => {
    const head = (st.headSeq.get(threadId) as { head_seq: number }).head_seq + 1;
    const id = newEventId();
    st.insertEvent.run(threadId, head, id, type, 'system', JSON.stringify(data), null, nowIso);
    st.setHeadSeq.run(head, threadId);
    return { id, threadId, seq: head, type, principalId: 'system', data, clientEventId: null, createdAt: nowIso };
  };

  const getPrincipalSync = (id: string) => {
    const row = st.principalById.get(id) as PrincipalRow | undefined;
    return row ? toPrincipal(row) : null;
  };

  const grantInJob: SqliteStoreContext['grantInJob'] = (input, emit, nowIso) => {
    if (!st.threadById.get(input.threadId)) throw notFound(`thread ${input.threadId} not found`);
    const existing = st.liveGrant.get(input.threadId, input.principalId) as GrantRow | undefined;
    if (existing && (existing.role === input.role || !input.mayChangeRole)) {
      return { grant: toGrant(existing), change: 'unchanged' as const };
    }
    const event = appendSystemEvent(
      input.threadId,
      'participant_added',
      { principalId: input.principalId, role: input.role, by: input.by },
      nowIso,
    );
    if (existing) st.setGrantRole.run(input.role, input.threadId, input.principalId);
    else st.insertGrant.run(input.threadId, input.principalId, input.role, input.by, nowIso, event.seq);
    const grant = toGrant(st.liveGrant.get(input.threadId, input.principalId) as GrantRow);
    emit({ kind: 'events', threadId: input.threadId, events: [event] });
    emit({ kind: 'grant', change: 'added', grant });
    return { grant, change: existing ? ('role_changed' as const) : ('created' as const) };
  };
  const context: SqliteStoreContext = { st, write, now, getPrincipalSync, grantInJob };

  /** Revokes those of `ids` that are live tokens of the principal, logging each; returns them. */
  const revokeTokensJob = (
    principalId: string,
    ids: readonly string[],
    emit: (m: LiveBusMessage) => void,
    nowIso: string,
  ): string[] => {
    const revoked = ids.filter((id) => {
      const row = st.tokenById.get(id) as TokenRow | undefined;
      return row !== undefined && row.principal_id === principalId && st.revokeToken.run(nowIso, id).changes === 1;
    });
    for (const id of revoked) st.logRevocation.run(id, principalId, nowIso);
    if (revoked.length > 0) emit({ kind: 'tokens_revoked', principalId, tokenIds: revoked });
    return revoked;
  };

  /** Every live token of the principal, and the JWTs of its identity-provider subject (if any) issued before now. */
  const revokeAllJob = (principalId: string, emit: (m: LiveBusMessage) => void, nowIso: string) => {
    const ids = (st.liveTokenIdsOf.all(principalId) as Array<{ token_id: string }>).map((r) => r.token_id);
    const revokedTokenIds = revokeTokensJob(principalId, ids, emit, nowIso);
    if (st.setJwtsNotBefore.run(nowIso, principalId).changes === 0) return { revokedTokenIds, jwtsIssuedBefore: null };
    st.logRevocation.run(null, principalId, nowIso);
    emit({ kind: 'jwts_revoked', principalId, issuedBefore: nowIso });
    return { revokedTokenIds, jwtsIssuedBefore: nowIso };
  };

  const appendJob = (input: AppendInput, emit: (m: LiveBusMessage) => void, nowIso: string): AppendResult => {
    const { threadId, principalId } = input;
    const headRow = st.headSeqAndGrant.get(principalId, threadId) as { head_seq: number; granted: number } | undefined;
    if (!headRow) throw notFound(`thread ${threadId} not found`);
    if (headRow.granted !== 1) throw forbidden(`${principalId} holds no grant on thread ${threadId}`);
    let head = headRow.head_seq;
    const out: EventEnvelope[] = [];
    const fresh: EventEnvelope[] = [];
    // Run states touched by this request; `changed` ones are written back once at the end.
    const runs = new Map<string, { state: RunState; changed: boolean }>();
    for (const [index, event] of input.events.entries()) {
      const clientEventId = event.clientEventId ?? null;
      if (clientEventId !== null) {
        const stored = st.eventByClientId.get(threadId, principalId, clientEventId) as EventRow | undefined;
        if (stored) {
          const envelope = toEnvelope(stored);
          if (!isSameEvent(envelope, event)) {
            throw conflict(`clientEventId ${clientEventId} was already used with a different type or data`, {
              index,
              clientEventId,
              seq: stored.seq,
            });
          }
          out.push(envelope);
          continue;
        }
      }
      if (RUN_BOUND_TYPES.has(event.type)) {
        const runId = event.data.runId as string;
        let entry = runs.get(runId);
        if (entry === undefined) {
          const row = st.runById.get(threadId, runId) as
            | { principal_id: string; started: number; finished: number }
            | undefined;
          entry = row
            ? {
                state: { ownerPrincipalId: row.principal_id, started: row.started === 1, finished: row.finished === 1 },
                changed: false,
              }
            : undefined;
        }
        const state = entry?.state ?? null;
        runs.set(
          runId,
          stepRun(
            event.type as 'run_started' | 'message_part' | 'run_finished',
            runId,
            principalId,
            state,
            entry,
            index,
          ),
        );
      }
      head += 1;
      const id = newEventId();
      st.insertEvent.run(
        threadId,
        head,
        id,
        event.type,
        principalId,
        event.dataJson ?? JSON.stringify(event.data),
        clientEventId,
        nowIso,
      );
      const envelope: EventEnvelope = {
        id,
        threadId,
        seq: head,
        type: event.type,
        principalId,
        data: event.data,
        clientEventId,
        createdAt: nowIso,
      };
      out.push(envelope);
      fresh.push(envelope);
    }
    if (fresh.length > 0) {
      st.setHeadSeq.run(head, threadId);
      for (const [runId, { state, changed }] of runs) {
        if (changed)
          st.upsertRun.run(threadId, runId, state.ownerPrincipalId, state.started ? 1 : 0, state.finished ? 1 : 0);
      }
      emit({ kind: 'events', threadId, events: fresh });
    }
    return { events: out, replay: fresh.length === 0 };
  };

  const store: BubbleStore = {
    createPrincipal: (input, token) =>
      write((_emit, nowIso) => {
        if (st.principalExists.get(input.principalId)) throw conflict(`principal ${input.principalId} already exists`);
        st.insertPrincipal.run(
          input.principalId,
          input.kind,
          input.displayName,
          input.kind === 'bot' ? (input.joinableBy ?? 'owners') : null,
          nowIso,
        );
        input.ownerPrincipalIds.forEach((owner, i) => {
          st.insertOwner.run(input.principalId, owner, i);
        });
        if (token) st.insertToken.run(token.tokenId, token.principalId, token.hash, nowIso);
        return getPrincipalSync(input.principalId)!;
      }),
    getPrincipal: async (id) => getPrincipalSync(id),
    updatePrincipal: (principalId, patch) =>
      write((emit) => {
        const result = st.updatePrincipal.run({
          principalId,
          displayName: patch.displayName ?? null,
          joinableBy: patch.joinableBy ?? null,
        });
        if (result.changes === 0) throw notFound(`principal ${principalId} not found`);
        const principal = getPrincipalSync(principalId)!;
        emit({ kind: 'principal_updated', principal });
        return principal;
      }),
    searchVisiblePrincipals: async (viewer, query, limit) =>
      (st.searchVisible.all({ viewer, q: query.toLowerCase(), limit }) as PrincipalRow[]).map(toPrincipal),
    isPrincipalVisible: async (viewer, target) => st.isVisible.get({ viewer, target }) !== undefined,
    addToken: (token) =>
      write((_emit, nowIso) => {
        st.insertToken.run(token.tokenId, token.principalId, token.hash, nowIso);
        return toToken(st.tokenById.get(token.tokenId) as TokenRow);
      }),
    listTokens: async (principalId) => (st.tokensOf.all(principalId) as TokenRow[]).map(toToken),
    findLiveTokenByHash: async (hash) => {
      const row = st.liveTokenByHash.get(hash) as TokenRow | undefined;
      return row ? toToken(row) : null;
    },
    revokeTokens: (principalId, tokenId) =>
      tokenId === undefined
        ? write((emit, nowIso) => revokeAllJob(principalId, emit, nowIso).revokedTokenIds)
        : write((emit, nowIso) => revokeTokensJob(principalId, [tokenId], emit, nowIso)),
    revokeAllCredentials: (principalId) => write((emit, nowIso) => revokeAllJob(principalId, emit, nowIso)),

    ...peopleMethods(context),
    ...inviteMethods(context),
    ...invitationMethods(context),

    createThread: (input) =>
      write((emit, nowIso) => {
        if (input.key !== null) {
          const existing = st.threadByKey.get(input.createdBy, input.parentThreadId ?? '', input.key) as
            | ThreadRow
            | undefined;
          if (existing) return { thread: toThread(existing), created: false };
        }
        if (input.parentThreadId !== null && !st.threadById.get(input.parentThreadId)) {
          throw notFound(`thread ${input.parentThreadId} not found`);
        }
        if (st.threadById.get(input.threadId)) throw conflict(`thread ${input.threadId} already exists`);
        st.insertThread.run(input.threadId, input.parentThreadId, input.title, input.createdBy, nowIso, input.key);
        const event = appendSystemEvent(
          input.threadId,
          'participant_added',
          { principalId: input.createdBy, role: 'owner', by: input.createdBy },
          nowIso,
        );
        st.insertGrant.run(input.threadId, input.createdBy, 'owner', input.createdBy, nowIso, event.seq);
        emit({ kind: 'events', threadId: input.threadId, events: [event] });
        const grant = toGrant(st.liveGrant.get(input.threadId, input.createdBy) as GrantRow);
        emit({ kind: 'grant', change: 'added', grant });
        return { thread: toThread(st.threadById.get(input.threadId) as ThreadRow), created: true };
      }),
    getThread: async (threadId) => {
      const row = st.threadById.get(threadId) as ThreadRow | undefined;
      return row ? visibleThread(row) : null;
    },
    getThreadAccess: async (threadId, principalId) => {
      const row = st.threadById.get(threadId) as ThreadRow | undefined;
      if (!row) return null;
      const grantRow = st.liveGrant.get(threadId, principalId) as GrantRow | undefined;
      return {
        thread: visibleThread(row),
        ownGrant: grantRow ? toGrant(grantRow) : null,
        ancestorGrant: row.parent_thread_id !== null && st.ancestorGrant.get(threadId, principalId) !== undefined,
      };
    },
    listThreadsWithLiveGrant: async (principalId) =>
      (st.threadsWithLiveGrant.all(principalId) as ThreadRow[]).map(visibleThread),
    listLiveGrantsOnThread: async (threadId) => (st.liveGrantsOnThread.all(threadId) as GrantRow[]).map(toGrant),
    listLiveGrantsOfPrincipal: async (principalId) => (st.liveGrantsOf.all(principalId) as GrantRow[]).map(toGrant),
    putGrant: (input) => write((emit, nowIso) => grantInJob(input, emit, nowIso)),
    revokeGrant: (input) =>
      write((emit, nowIso) => {
        const existing = st.liveGrant.get(input.threadId, input.principalId) as GrantRow | undefined;
        if (!existing) return null;
        st.revokeGrant.run(nowIso, input.threadId, input.principalId);
        const event = appendSystemEvent(
          input.threadId,
          'participant_removed',
          { principalId: input.principalId, role: existing.role, by: input.by },
          nowIso,
        );
        const grant: Grant = { ...toGrant(existing), revokedAt: nowIso };
        emit({ kind: 'events', threadId: input.threadId, events: [event] });
        emit({ kind: 'grant', change: 'revoked', grant });
        return grant;
      }),

    appendEvents: (input) => write((emit, nowIso) => appendJob(input, emit, nowIso)),
    readEventsAfter: async (threadId, afterSeq, limit) => {
      const head = st.headSeq.get(threadId) as { head_seq: number } | undefined;
      if (!head) throw notFound(`thread ${threadId} not found`);
      const rows = visibleEvents(threadId, st.eventsAfter.all(threadId, afterSeq, limit) as EventRow[]);
      return { events: rows.map(toEnvelope), headSeq: visibleHead(threadId, head.head_seq) };
    },
    readEventsBefore: async (threadId, beforeSeq, limit) => {
      const head = st.headSeq.get(threadId) as { head_seq: number } | undefined;
      if (!head) throw notFound(`thread ${threadId} not found`);
      const visible = visibleHead(threadId, head.head_seq);
      // Below the durable head only: a page read "before" a seq not yet durable starts at the durable head.
      const rows = st.eventsBefore.all(threadId, Math.min(beforeSeq, visible + 1), limit) as EventRow[];
      return { events: rows.reverse().map(toEnvelope), headSeq: visible };
    },

    putCursor: (threadId, principalId, seq) =>
      write(() => {
        st.upsertCursor.run(threadId, principalId, seq);
        return (st.cursor.get(threadId, principalId) as { seq: number }).seq;
      }),
    getCursor: async (threadId, principalId) =>
      (st.cursor.get(threadId, principalId) as { seq: number } | undefined)?.seq ?? 0,

    putArtifact: (input) =>
      write((emit, nowIso) => {
        if (!st.threadById.get(input.threadId)) throw notFound(`thread ${input.threadId} not found`);
        const latest = (st.latestArtifactVersion.get(input.threadId, input.name) as { v: number | null }).v ?? 0;
        if (input.baseVersion !== undefined && input.baseVersion !== latest) {
          throw conflict(`artifact ${input.name} is at version ${latest}, not ${input.baseVersion}`, {
            latestVersion: latest,
          });
        }
        const version = latest + 1;
        const size = Buffer.byteLength(input.content, 'utf8');
        st.insertArtifact.run(
          input.threadId,
          input.name,
          version,
          input.mediaType,
          input.content,
          size,
          input.by,
          nowIso,
        );
        const event = appendSystemEvent(
          input.threadId,
          'artifact_updated',
          { name: input.name, version, mediaType: input.mediaType, by: input.by },
          nowIso,
        );
        emit({ kind: 'events', threadId: input.threadId, events: [event] });
        return {
          name: input.name,
          version,
          mediaType: input.mediaType,
          updatedBy: input.by,
          updatedAt: nowIso,
          size,
          content: input.content,
        };
      }),
    listArtifacts: async (threadId) => (st.listArtifacts.all(threadId) as ArtifactRow[]).map(toArtifactMeta),
    getArtifact: async (threadId, name, version) => {
      const row = (
        version === undefined ? st.artifactLatest.get(threadId, name) : st.artifactVersion.get(threadId, name, version)
      ) as ArtifactRow | undefined;
      return row ? toArtifact(row) : null;
    },

    ping: async () => {
      writes.assertHealthy();
      st.ping.get();
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await writes.drained();
      wal?.close();
      db.close();
    },
  };
  return store;
}
