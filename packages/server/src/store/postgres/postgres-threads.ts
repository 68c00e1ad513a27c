import type { Grant } from '@bubble/protocol';
import { conflict, notFound } from '../../errors/bubble-error.js';
import type { BubbleStore } from '../store.js';
import {
  toArtifact,
  toArtifactMeta,
  toGrant,
  toThread,
  type ArtifactRow,
  type GrantRow,
  type ThreadRow,
} from '../sqlite/sqlite-rows.js';
import { appendSystemEvent, grantInJob, type PostgresStoreContext } from './postgres-context.js';
import { SQL } from './postgres-sql.js';

type ThreadMethods = Pick<
  BubbleStore,
  | 'createThread'
  | 'getThread'
  | 'getThreadAccess'
  | 'listThreadsWithLiveGrant'
  | 'listLiveGrantsOnThread'
  | 'listLiveGrantsOfPrincipal'
  | 'putGrant'
  | 'revokeGrant'
  | 'putCursor'
  | 'getCursor'
  | 'putArtifact'
  | 'listArtifacts'
  | 'getArtifact'
>;

interface CreationFacts {
  by_key: ThreadRow | null;
  parent_exists: boolean;
  taken: boolean;
}

/** Threads, their grants, read cursors and artifacts. */
export function threadMethods({ db, write }: PostgresStoreContext): ThreadMethods {
  return {
    createThread: (input) =>
      write({
        run: async (tx) => {
          const [facts] = await tx.read<CreationFacts>(SQL.threadCreationFacts, [
            input.createdBy,
            input.parentThreadId ?? '',
            input.key,
            input.parentThreadId,
            input.threadId,
          ]);
          if (facts!.by_key !== null) {
            // A thread this group appended to reads with its head as the group sees it.
            const row = facts!.by_key;
            return {
              thread: toThread({ ...row, head_seq: tx.knownHead(row.thread_id) ?? row.head_seq }),
              created: false,
            };
          }
          if (!facts!.parent_exists) throw notFound(`thread ${input.parentThreadId} not found`);
          if (facts!.taken) throw conflict(`thread ${input.threadId} already exists`);
          const { rows } = await tx.write<ThreadRow>(SQL.insertThread, [
            input.threadId,
            input.parentThreadId,
            input.title,
            input.createdBy,
            tx.nowIso,
            input.key,
          ]);
          tx.insertedThread(input.threadId);
          const event = await appendSystemEvent(tx, input.threadId, 'participant_added', {
            principalId: input.createdBy,
            role: 'owner',
            by: input.createdBy,
          });
          const granted = await tx.write<GrantRow>(SQL.insertGrant, [
            input.threadId,
            input.createdBy,
            'owner',
            input.createdBy,
            tx.nowIso,
            event.seq,
          ]);
          tx.noteGrant(input.threadId, input.createdBy, true);
          tx.emit({ kind: 'events', threadId: input.threadId, events: [event] });
          tx.emit({ kind: 'grant', change: 'added', grant: toGrant(granted.rows[0]!) });
          return { thread: toThread({ ...rows[0]!, head_seq: event.seq }), created: true };
        },
      }),
    getThread: async (threadId) => {
      const [row] = await db.query<ThreadRow>(SQL.threadById, [threadId]);
      return row ? toThread(row) : null;
    },
    getThreadAccess: async (threadId, principalId) => {
      const [row] = await db.query<ThreadRow & { own_grant: GrantRow | null; ancestor_grant: boolean }>(
        SQL.threadAccess,
        [threadId, principalId],
      );
      if (!row) return null;
      return {
        thread: toThread(row),
        ownGrant: row.own_grant ? toGrant(row.own_grant) : null,
        ancestorGrant: row.ancestor_grant,
      };
    },
    listThreadsWithLiveGrant: async (principalId) =>
      (await db.query<ThreadRow>(SQL.threadsWithLiveGrant, [principalId])).map(toThread),
    listLiveGrantsOnThread: async (threadId) =>
      (await db.query<GrantRow>(SQL.liveGrantsOnThread, [threadId])).map(toGrant),
    listLiveGrantsOfPrincipal: async (principalId) =>
      (await db.query<GrantRow>(SQL.liveGrantsOf, [principalId])).map(toGrant),
    putGrant: (input) => write({ threads: [input.threadId], run: (tx) => grantInJob(tx, input) }),
    revokeGrant: (input) =>
      write({
        threads: [input.threadId],
        run: async (tx) => {
          const [existing] = await tx.read<GrantRow>(SQL.liveGrant, [input.threadId, input.principalId]);
          if (!existing) return null;
          const event = await appendSystemEvent(tx, input.threadId, 'participant_removed', {
            principalId: input.principalId,
            role: existing.role,
            by: input.by,
          });
          await tx.write(SQL.revokeGrant, [tx.nowIso, input.threadId, input.principalId]);
          tx.noteGrant(input.threadId, input.principalId, false);
          const grant: Grant = { ...toGrant(existing), revokedAt: tx.nowIso };
          tx.emit({ kind: 'events', threadId: input.threadId, events: [event] });
          tx.emit({ kind: 'grant', change: 'revoked', grant });
          return grant;
        },
      }),

    putCursor: (threadId, principalId, seq) =>
      write({
        run: async (tx) =>
          (await tx.write<{ seq: number }>(SQL.upsertCursor, [threadId, principalId, seq])).rows[0]!.seq,
      }),
    getCursor: async (threadId, principalId) =>
      (await db.query<{ seq: number }>(SQL.cursor, [threadId, principalId]))[0]?.seq ?? 0,

    putArtifact: (input) =>
      write({
        threads: [input.threadId],
        run: async (tx) => {
          if ((await tx.head(input.threadId)) === null) throw notFound(`thread ${input.threadId} not found`);
          const [{ v: latest }] = (await tx.read<{ v: number }>(SQL.latestArtifactVersion, [
            input.threadId,
            input.name,
          ])) as [{ v: number }];
          if (input.baseVersion !== undefined && input.baseVersion !== latest) {
            throw conflict(`artifact ${input.name} is at version ${latest}, not ${input.baseVersion}`, {
              latestVersion: latest,
            });
          }
          const version = latest + 1;
          const size = Buffer.byteLength(input.content, 'utf8');
          const event = await appendSystemEvent(tx, input.threadId, 'artifact_updated', {
            name: input.name,
            version,
            mediaType: input.mediaType,
            by: input.by,
          });
          await tx.write(SQL.insertArtifact, [
            input.threadId,
            input.name,
            version,
            input.mediaType,
            input.content,
            size,
            input.by,
            tx.nowIso,
          ]);
          tx.emit({ kind: 'events', threadId: input.threadId, events: [event] });
          return {
            name: input.name,
            version,
            mediaType: input.mediaType,
            updatedBy: input.by,
            updatedAt: tx.nowIso,
            size,
            content: input.content,
          };
        },
      }),
    listArtifacts: async (threadId) => (await db.query<ArtifactRow>(SQL.listArtifacts, [threadId])).map(toArtifactMeta),
    getArtifact: async (threadId, name, version) => {
      const [row] =
        version === undefined
          ? await db.query<ArtifactRow>(SQL.artifactLatest, [threadId, name])
          : await db.query<ArtifactRow>(SQL.artifactVersion, [threadId, name, version]);
      return row ? toArtifact(row) : null;
    },
  };
}
