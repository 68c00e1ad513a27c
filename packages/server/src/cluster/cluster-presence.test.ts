/**
 * Presence across instances on the real PostgreSQL store, several "instances" (a store, a bus, a
 * registry and a `ClusterPresence` each) in one process on one database, with short timings: a
 * principal online on one is online on the others and offline again when it goes; an instance
 * whose heartbeat stops takes its principals with it once the heartbeat is older than the expiry;
 * a row written without its message is found by the next re-read; the feed's SQL on its own.
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import type { LiveBusMessage } from '../live/live-bus.js';
import { PresenceRegistry } from '../presence/presence-registry.js';
import { openPostgresStore, type PostgresStore } from '../store/postgres/postgres-store.js';
import { createClusterBus, type ClusterBus } from './cluster-bus.js';
import { ClusterPresence, type ClusterPresenceOptions } from './cluster-presence.js';

let db: TestDatabase;
const opened: Array<{ presence: ClusterPresence | null; bus: ClusterBus; store: PostgresStore }> = [];

beforeAll(async () => {
  db = await freshDatabase('cluster-presence');
});

afterEach(async () => {
  for (const { presence, bus, store } of opened.splice(0)) {
    await presence?.close();
    await bus.close();
    await store.close();
  }
});

afterAll(async () => {
  await db?.drop();
});

const FAST: ClusterPresenceOptions = {
  presenceHeartbeatMs: 100,
  presenceExpiryMs: 600,
  presenceResyncMs: 100,
  presenceSweepAfterMs: 60_000,
};

interface Node {
  store: PostgresStore;
  registry: PresenceRegistry;
  presence: ClusterPresence;
  changes: string[];
}

async function openStore(messages?: LiveBusMessage[]) {
  const bus = createClusterBus({ logger: pino({ level: 'silent' }) });
  const store = await openPostgresStore(db.url, {
    poolSize: 3,
    onCommit: (committed) => {
      for (const message of committed) bus.publish(message);
    },
  });
  const entry: (typeof opened)[number] = { presence: null, bus, store };
  opened.push(entry);
  await bus.join(store);
  if (messages !== undefined) bus.subscribe((message) => messages.push(message));
  return { bus, store, entry };
}

async function node(options: ClusterPresenceOptions = FAST): Promise<Node> {
  const { bus, store, entry } = await openStore();
  const registry = new PresenceRegistry();
  const changes: string[] = [];
  registry.onChange((principalId, online) => changes.push(`${principalId}:${online ? 'on' : 'off'}`));
  const presence = await ClusterPresence.start({
    ...options,
    feed: store,
    registry,
    bus,
    logger: pino({ level: 'silent' }),
  });
  entry.presence = presence;
  return { store, registry, presence, changes };
}

async function until(probe: () => boolean, what: string, timeoutMs = 3_000): Promise<number> {
  const started = performance.now();
  while (!probe()) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - started;
}

async function sql(text: string, params: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(text, params);
  } finally {
    await client.end();
  }
}

describe('ClusterPresence', () => {
  it('shows a principal online on one instance on the others, once, and offline when it goes', async () => {
    const [a, b, c] = [await node(), await node(), await node()];
    a.registry.setLocal('bot', true);
    await until(() => b.registry.isOnline('bot') && c.registry.isOnline('bot'), 'bot online on b and c');
    // On b too (written before a's goes: two commits on two instances could land in either order).
    b.registry.setLocal('bot', true);
    await new Promise((r) => setTimeout(r, 300));
    a.registry.setLocal('bot', false);
    await new Promise((r) => setTimeout(r, 300));
    expect([a, b, c].map((n) => n.registry.isOnline('bot'))).toEqual([true, true, true]);
    b.registry.setLocal('bot', false);
    await until(() => !a.registry.isOnline('bot') && !c.registry.isOnline('bot'), 'bot offline everywhere');
    await new Promise((r) => setTimeout(r, 300));
    expect(c.changes).toEqual(['bot:on', 'bot:off']);
  });

  it('drops the principals of an instance whose heartbeat stopped, once it is older than the expiry', async () => {
    // This one beats at start and never again (a heartbeat far apart), as a process killed with -9.
    const silent = await node({ ...FAST, presenceHeartbeatMs: 3_600_000, presenceResyncMs: 3_600_000 });
    const watcher = await node();
    silent.registry.setLocal('bot', true);
    await until(() => watcher.registry.isOnline('bot'), 'bot online on the watcher');
    const after = await until(() => !watcher.registry.isOnline('bot'), 'bot offline on the watcher', 3_000);
    // The expiry (600 ms) and a re-read (every 100 ms), from when the silent one beat last.
    expect(after).toBeLessThan(1_500);
    expect(watcher.changes).toEqual(['bot:on', 'bot:off']);
  });

  it('finds by its periodic re-read a row whose message was lost; an instance found swept registers again and rewrites its rows', async () => {
    const a = await node();
    const b = await node();
    a.registry.setLocal('real', true);
    // A row of a's, written behind its back with no outbox message: only the re-read can find it.
    await sql('INSERT INTO presence (instance_id, principal_id, since) VALUES ($1, $2, $3)', [
      a.presence.instanceId,
      'ghost',
      new Date().toISOString(),
    ]);
    await until(() => b.registry.isOnline('ghost') && b.registry.isOnline('real'), 'ghost and real online on b');
    // As if a had been cut off past the sweep: its registration gone. Its next heartbeat registers
    // it again and makes its rows match its sockets: ghost goes, real stays.
    await sql('DELETE FROM cluster_instances WHERE instance_id = $1', [a.presence.instanceId]);
    const rowsOfA = async () =>
      (await b.store.readPresence(10_000))
        .filter((r) => r.instanceId === a.presence.instanceId)
        .map((r) => r.principalId);
    for (const deadline = Date.now() + 3_000; ; ) {
      const rows = await rowsOfA();
      if (rows.length === 1 && rows[0] === 'real') break;
      if (Date.now() > deadline) throw new Error(`a's rows are ${JSON.stringify(rows)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // While a was unregistered, b's re-read saw none of its rows (real too); its next re-read after a
    // registered again brings real back, without ghost.
    await until(() => !b.registry.isOnline('ghost') && b.registry.isOnline('real'), 'ghost offline, real online on b');
  });
});

describe('the PostgreSQL presence feed', () => {
  it('announces each row it adds or removes in the outbox, and reads only the rows of live instances', async () => {
    const messages: LiveBusMessage[] = [];
    const { store } = await openStore();
    const { store: reader } = await openStore(messages);
    await store.registerInstance('inst_x');
    await store.putPresence('inst_x', 'p1', true);
    await store.putPresence('inst_x', 'p1', true);
    await store.putPresence('inst_x', 'p2', true);
    await store.putPresence('inst_x', 'p2', false);
    await store.replacePresence('inst_x', ['p1', 'p3']);
    const rows = await reader.readPresence(10_000);
    expect(
      rows
        .filter((r) => r.instanceId === 'inst_x')
        .map((r) => r.principalId)
        .sort(),
    ).toEqual(['p1', 'p3']);
    await until(() => messages.filter((m) => m.kind === 'presence').length >= 4, 'four presence messages');
    expect(messages.filter((m) => m.kind === 'presence')).toEqual([
      { kind: 'presence', instanceId: 'inst_x', principalId: 'p1', online: true },
      { kind: 'presence', instanceId: 'inst_x', principalId: 'p2', online: true },
      { kind: 'presence', instanceId: 'inst_x', principalId: 'p2', online: false },
      { kind: 'presence', instanceId: 'inst_x', principalId: 'p3', online: true },
    ]);

    // A heartbeat older than asked for: not read; older than the sweep: deleted with its rows.
    await sql("UPDATE cluster_instances SET heartbeat_at = now() - interval '30 seconds' WHERE instance_id = 'inst_x'");
    expect((await reader.readPresence(10_000)).filter((r) => r.instanceId === 'inst_x')).toEqual([]);
    expect((await reader.readPresence(60_000)).filter((r) => r.instanceId === 'inst_x')).toHaveLength(2);
    await reader.sweepInstances(20_000);
    expect(await store.heartbeatInstance('inst_x')).toBe(false);
    await store.registerInstance('inst_x');
    expect((await reader.readPresence(10_000)).filter((r) => r.instanceId === 'inst_x')).toEqual([]);

    messages.length = 0;
    await store.replacePresence('inst_x', ['p4']);
    await store.removeInstance('inst_x');
    await until(() => messages.filter((m) => m.kind === 'presence').length >= 2, 'two presence messages');
    expect(messages.filter((m) => m.kind === 'presence').map((m) => m.kind === 'presence' && m.online)).toEqual([
      true,
      false,
    ]);
    expect(await store.heartbeatInstance('inst_x')).toBe(false);
  });
});
