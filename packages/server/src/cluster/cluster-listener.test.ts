/**
 * The LISTEN connection against a real PostgreSQL: hints arrive as sent, a malformed payload
 * becomes `overflow`, and a terminated backend is replaced (with `onListening` again, so its owner
 * catches up on what it missed).
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import { CLUSTER_CHANNEL, type ClusterHint } from '../store/cluster-feed.js';
import { LISTENER_APPLICATION_NAME, parseHint, startClusterListener } from './cluster-listener.js';

let db: TestDatabase;
let admin: pg.Client;

beforeAll(async () => {
  db = await freshDatabase('cluster-listener');
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await db?.drop();
});

const notify = (payload: string) => admin.query('SELECT pg_notify($1, $2)', [CLUSTER_CHANNEL, payload]);

async function until(condition: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('startClusterListener', () => {
  it('hands on hints, reconnects after its backend is terminated, and says so each time it listens', async () => {
    const hints: ClusterHint[] = [];
    let listened = 0;
    const listener = await startClusterListener({
      connectionString: db.url,
      onHint: (hint) => hints.push(hint),
      onListening: () => {
        listened += 1;
      },
      logger: pino({ level: 'silent' }),
      minBackoffMs: 20,
    });
    try {
      expect(listener.listening).toBe(true);
      expect(listened).toBe(1);
      await notify(JSON.stringify({ heads: [{ threadId: 'th_a', headSeq: 7 }], outbox: 3 }));
      await notify('not json');
      await until(() => hints.length === 2, 'two hints');
      expect(hints).toEqual([
        { heads: [{ threadId: 'th_a', headSeq: 7 }], outbox: 3 },
        { heads: [], overflow: true },
      ]);

      const killed = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
        [LISTENER_APPLICATION_NAME],
      );
      expect(killed.rowCount).toBe(1);
      await until(() => listened === 2, 'a second LISTEN');
      await notify(JSON.stringify({ heads: [{ threadId: 'th_b', headSeq: 1 }] }));
      await until(() => hints.length === 3, 'a hint after the reconnection');
      expect(hints[2]).toEqual({ heads: [{ threadId: 'th_b', headSeq: 1 }] });
    } finally {
      await listener.close();
    }
    expect(listener.listening).toBe(false);
  });

  it('starts without a database and listens once one answers', async () => {
    let listened = 0;
    // Port 9 (discard) refuses connections on loopback; the listener keeps retrying, so it is closed here.
    const listener = await startClusterListener({
      connectionString: 'postgres://postgres@127.0.0.1:9/none',
      onHint: () => {},
      onListening: () => {
        listened += 1;
      },
      logger: pino({ level: 'silent' }),
      minBackoffMs: 10,
      maxBackoffMs: 20,
    });
    expect(listener.listening).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(listened).toBe(0);
    await listener.close();
  });
});

describe('parseHint', () => {
  it.each([
    ['{"heads":[]}', { heads: [] }],
    ['{"heads":[],"overflow":true}', { heads: [], overflow: true }],
    ['{"heads":[{"threadId":"t","headSeq":2}],"outbox":9}', { heads: [{ threadId: 't', headSeq: 2 }], outbox: 9 }],
    ['{"heads":[{"threadId":"t","headSeq":"2"}]}', { heads: [], overflow: true }],
    ['{"outbox":1}', { heads: [], overflow: true }],
    ['', { heads: [], overflow: true }],
  ])('%s', (payload, hint) => {
    expect(parseHint(payload)).toEqual(hint);
  });
});
