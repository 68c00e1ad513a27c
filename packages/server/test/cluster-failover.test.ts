/**
 * Instances that die and come back: kill -9 of one loses no acknowledged event and its clients
 * resume on another from their last seq; a restart of every instance loses nothing and seqs go
 * on; a dropped LISTEN connection is replaced and what was committed meanwhile still arrives.
 */
import { LISTENER_APPLICATION_NAME } from '../src/cluster/cluster-listener.js';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestSocket } from '../src/ws/ws-test-client.js';
import {
  collectSeqs,
  range,
  sharedThread,
  startClusterWorld,
  subscribe,
  until,
  type ClusterWorld,
} from './support/cluster-world.js';

let world: ClusterWorld | undefined;

afterEach(async () => {
  await world?.close();
  world = undefined;
});

interface Acked {
  clientEventId: string;
  seq: number;
}

/** Appends one event at a time through `url` until `stop()`; records what was acknowledged (201). */
function writer(api: ReturnType<ClusterWorld['instances'][number]['as']>, threadId: string, name: string) {
  const acked: Acked[] = [];
  let stopped = false;
  let failures = 0;
  const done = (async () => {
    for (let i = 0; !stopped; i += 1) {
      const clientEventId = `${name}-${i}`;
      try {
        const res = await api.post(`/v1/threads/${threadId}/events`, { type: 'acme.n', data: { i }, clientEventId });
        if (res.status === 201) acked.push({ clientEventId, seq: res.body.events[0].seq });
        else failures += 1;
      } catch {
        // The instance died under the request: not acknowledged, so nothing is promised about it.
        failures += 1;
        if (failures > 3) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  })();
  return {
    acked,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** Every event frame on `socket` for subscription `id` until it closes; the seqs in arrival order. */
function record(socket: TestSocket, id: string): { seqs: number[]; closed: Promise<number> } {
  // What arrived before this call is in the socket's queue; the rest is taken as it comes.
  const seqs = socket
    .pending()
    .filter((frame) => frame.type === 'event' && frame.id === id)
    .map((frame) => (frame.event as { seq: number }).seq);
  socket.ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { type: string; id?: string; event?: { seq: number } };
    if (frame.type === 'event' && frame.id === id) seqs.push(frame.event!.seq);
  });
  return { seqs, closed: socket.closed.then((c) => c.code) };
}

describe('instances that die and come back', () => {
  it('kill -9 of one loses no acknowledged event, and its clients resume on another from their last seq', async () => {
    world = await startClusterWorld('cluster-kill', { instances: 2 });
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const threadId = await sharedThread(a, world.tokens.alice!, ['bob'], world.tokens);
    const onA = await a.socket(world.tokens.bob!);
    expect((await subscribe(onA, 's', threadId)).type).toBe('subscribed');
    const seen = record(onA, 's');
    const throughA = writer(a.as(world.tokens.alice!), threadId, 'a');
    const throughB = writer(b.as(world.tokens.bob!), threadId, 'b');
    await until(
      () => (throughA.acked.length >= 30 && seen.seqs.length >= 30 ? true : undefined),
      '30 appends through A',
    );
    await a.kill();
    expect(await seen.closed).toBe(1006);
    await throughA.stop();
    await until(() => (throughB.acked.length >= throughA.acked.length + 20 ? true : undefined), 'appends through B');
    await throughB.stop();

    // Every acknowledged event is there, through the survivor, at the seq it was acknowledged with.
    const log = await b.as(world.tokens.alice!).get(`/v1/threads/${threadId}/events?after=0&limit=1000`);
    const stored = new Map<string, number>(
      (log.body.events as Array<{ clientEventId: string | null; seq: number }>)
        .filter((e) => e.clientEventId !== null)
        .map((e) => [e.clientEventId!, e.seq]),
    );
    for (const { clientEventId, seq } of [...throughA.acked, ...throughB.acked])
      expect(stored.get(clientEventId)).toBe(seq);
    expect((log.body.events as Array<{ seq: number }>).map((e) => e.seq)).toEqual(range(1, log.body.headSeq));

    // Bob's client resumes on B from the last seq it got on A: the rest, exactly once.
    const last = seen.seqs.at(-1)!;
    expect(seen.seqs).toEqual(range(1, last));
    const onB = await b.socket(world.tokens.bob!);
    try {
      expect((await subscribe(onB, 's', threadId, last)).type).toBe('subscribed');
      expect(await collectSeqs(onB, 's', last, log.body.headSeq)).toEqual(range(last + 1, log.body.headSeq));
    } finally {
      onB.close();
    }
  });

  it('a restart of every instance loses nothing, and seqs go on from the head', async () => {
    world = await startClusterWorld('cluster-restart', { instances: 2 });
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const threadId = await sharedThread(a, world.tokens.alice!, ['bob'], world.tokens);
    for (let i = 0; i < 10; i += 1) {
      const via = i % 2 === 0 ? a.as(world.tokens.alice!) : b.as(world.tokens.bob!);
      expect((await via.post(`/v1/threads/${threadId}/events`, { type: 'acme.n', data: { i } })).status).toBe(201);
    }
    const before = (await b.as(world.tokens.alice!).get(`/v1/threads/${threadId}/events?after=0&limit=1000`)).body;
    expect(before.headSeq).toBe(12);
    // One stops cleanly, the other crashes.
    await a.stop();
    await b.kill();

    const [c, d] = await Promise.all([world.start('instance-c'), world.start('instance-d')]);
    const after = (await c.as(world.tokens.alice!).get(`/v1/threads/${threadId}/events?after=0&limit=1000`)).body;
    expect(after).toEqual(before);
    const onD = await d.socket(world.tokens.bob!);
    try {
      expect((await subscribe(onD, 's', threadId, 0)).type).toBe('subscribed');
      const next = await c.as(world.tokens.alice!).post(`/v1/threads/${threadId}/events`, { type: 'acme.n', data: {} });
      expect(next.body.events[0].seq).toBe(13);
      expect(await collectSeqs(onD, 's', 0, 13)).toEqual(range(1, 13));
    } finally {
      onD.close();
    }
  });

  it('an instance whose LISTEN connection drops reconnects, and what was committed meanwhile still arrives', async () => {
    world = await startClusterWorld('cluster-relisten', { instances: 2 });
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const threadId = await sharedThread(a, world.tokens.alice!, ['bob'], world.tokens);
    const onB = await b.socket(world.tokens.bob!);
    const admin = new pg.Client({ connectionString: world.db.url });
    await admin.connect();
    try {
      expect((await subscribe(onB, 's', threadId)).type).toBe('subscribed');
      const append = (i: number) =>
        a.as(world!.tokens.alice!).post(`/v1/threads/${threadId}/events`, { type: 'acme.n', data: { i } });
      expect((await append(0)).status).toBe(201);
      // Both instances lose their LISTEN connection; appends through A go on while they reconnect.
      const terminated = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
        [LISTENER_APPLICATION_NAME],
      );
      expect(terminated.rowCount).toBe(2);
      for (let i = 1; i <= 5; i += 1) expect((await append(i)).status).toBe(201);
      await until(async () => {
        const { rows } = await admin.query(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
          [LISTENER_APPLICATION_NAME],
        );
        return rows[0].n === 2 ? true : undefined;
      }, 'both instances listening again');
      for (let i = 6; i <= 8; i += 1) expect((await append(i)).status).toBe(201);
      expect(await collectSeqs(onB, 's', 0, 11)).toEqual(range(1, 11));
    } finally {
      onB.close();
      await admin.end();
    }
  });
});
