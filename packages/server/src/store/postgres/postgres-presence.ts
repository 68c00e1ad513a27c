import type { PresenceFeed } from '../cluster-feed.js';
import type { PostgresStoreContext } from './postgres-context.js';

/**
 * Who holds a WebSocket on which instance (`cluster-feed.ts`, `PresenceFeed`). Rows change through
 * the group commit, so an instance's changes land in the order it made them, each with its
 * `presence` outbox message in the same transaction. Heartbeats are the database's `now()`:
 * instances compare them with the same clock, whatever their own say.
 */
export function presenceMethods({ db, write }: PostgresStoreContext): PresenceFeed {
  return {
    registerInstance: async (instanceId) => {
      await db.query(
        `INSERT INTO cluster_instances (instance_id, started_at, heartbeat_at) VALUES ($1, $2, now())
         ON CONFLICT (instance_id) DO UPDATE SET heartbeat_at = now()`,
        [instanceId, new Date().toISOString()],
      );
    },

    heartbeatInstance: async (instanceId) =>
      (
        await db.query('UPDATE cluster_instances SET heartbeat_at = now() WHERE instance_id = $1 RETURNING 1', [
          instanceId,
        ])
      ).length > 0,

    putPresence: (instanceId, principalId, online) =>
      write({
        run: async (tx) => {
          const { rowCount } = online
            ? await tx.write(
                `INSERT INTO presence (instance_id, principal_id, since) VALUES ($1, $2, $3)
                 ON CONFLICT (instance_id, principal_id) DO NOTHING`,
                [instanceId, principalId, tx.nowIso],
              )
            : await tx.write('DELETE FROM presence WHERE instance_id = $1 AND principal_id = $2', [
                instanceId,
                principalId,
              ]);
          if (rowCount > 0) tx.emit({ kind: 'presence', instanceId, principalId, online });
        },
      }),

    replacePresence: (instanceId, principalIds) =>
      write({
        run: async (tx) => {
          const removed = await tx.write<{ principal_id: string }>(
            `DELETE FROM presence WHERE instance_id = $1 AND NOT (principal_id = ANY($2::text[]))
             RETURNING principal_id`,
            [instanceId, principalIds],
          );
          const added = await tx.write<{ principal_id: string }>(
            `INSERT INTO presence (instance_id, principal_id, since)
             SELECT $1, p, $3 FROM unnest($2::text[]) AS p
             ON CONFLICT (instance_id, principal_id) DO NOTHING RETURNING principal_id`,
            [instanceId, principalIds, tx.nowIso],
          );
          for (const row of removed.rows)
            tx.emit({ kind: 'presence', instanceId, principalId: row.principal_id, online: false });
          for (const row of added.rows)
            tx.emit({ kind: 'presence', instanceId, principalId: row.principal_id, online: true });
        },
      }),

    readPresence: async (freshWithinMs) =>
      (
        await db.query<{ instance_id: string; principal_id: string }>(
          `SELECT p.instance_id, p.principal_id FROM presence p
           JOIN cluster_instances i ON i.instance_id = p.instance_id
           WHERE i.heartbeat_at > now() - make_interval(secs => $1::double precision / 1000)`,
          [freshWithinMs],
        )
      ).map((row) => ({ instanceId: row.instance_id, principalId: row.principal_id })),

    removeInstance: (instanceId) =>
      write({
        run: async (tx) => {
          const removed = await tx.write<{ principal_id: string }>(
            'DELETE FROM presence WHERE instance_id = $1 RETURNING principal_id',
            [instanceId],
          );
          await tx.write('DELETE FROM cluster_instances WHERE instance_id = $1', [instanceId]);
          for (const row of removed.rows)
            tx.emit({ kind: 'presence', instanceId, principalId: row.principal_id, online: false });
        },
      }),

    sweepInstances: async (silentForMs) => {
      await db.query(
        `WITH gone AS (
           DELETE FROM cluster_instances WHERE heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
           RETURNING instance_id
         )
         DELETE FROM presence p WHERE p.instance_id IN (SELECT instance_id FROM gone)
           OR NOT EXISTS (SELECT 1 FROM cluster_instances i WHERE i.instance_id = p.instance_id)`,
        [silentForMs],
      );
    },
  };
}
