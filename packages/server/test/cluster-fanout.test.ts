/**
 * Three real `bubble-server serve --database …` processes on one PostgreSQL database, written
 * to and read from all at once: per thread the log stays gapless and duplicate-free whichever
 * instance took each append, and a subscriber on any instance receives every event exactly once,
 * in seq order, across the backlog/live seam, while appends race through the others.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSocket } from '../src/ws/ws-test-client.js';
import {
  collectSeqs,
  range,
  sharedThread,
  startClusterWorld,
  subscribe,
  type ClusterWorld,
  type Instance,
} from './support/cluster-world.js';

let world: ClusterWorld;

beforeAll(async () => {
  world = await startClusterWorld('cluster-fanout', { instances: 3 });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

const people = ['alice', 'bob', 'carol'] as const;

/** `loops` concurrent writers per instance, each appending `rounds` times (every third a batch of 3), with unique clientEventIds. */
async function raceAppends(threadIds: string[], loops: number, rounds: number): Promise<Map<string, string[]>> {
  const sent = new Map<string, string[]>(threadIds.map((id) => [id, []]));
  const writers: Promise<void>[] = [];
  world.instances.forEach((instance, i) => {
    const person = people[i % people.length]!;
    const api = instance.as(world.tokens[person]!);
    for (let loop = 0; loop < loops; loop += 1) {
      writers.push(
        (async () => {
          for (let round = 0; round < rounds; round += 1) {
            const threadId = threadIds[(round + loop + i) % threadIds.length]!;
            const size = round % 3 === 2 ? 3 : 1;
            const events = Array.from({ length: size }, (_, k) => ({
              type: 'acme.note',
              data: { by: instance.name, loop, round, k },
              clientEventId: `${instance.name}-${loop}-${round}-${k}`,
            }));
            const res = await api.post(`/v1/threads/${threadId}/events`, size === 1 ? events[0] : { events });
            if (res.status !== 201) throw new Error(`append through ${instance.name}: ${res.status} ${res.text}`);
            sent.get(threadId)!.push(...events.map((e) => `${person}/${e.clientEventId}`));
          }
        })(),
      );
    }
  });
  await Promise.all(writers);
  return sent;
}

async function readAll(instance: Instance, threadId: string) {
  const res = await instance.as(world.tokens.alice!).get(`/v1/threads/${threadId}/events?after=0&limit=1000`);
  expect(res.status).toBe(200);
  return res.body as {
    events: Array<{ seq: number; principalId: string; clientEventId: string | null }>;
    headSeq: number;
  };
}

describe('three instances on one database', () => {
  it('appends through all of them at once end gapless and duplicate-free per thread', async () => {
    const a = world.instances[0]!;
    const threadIds = [
      await sharedThread(a, world.tokens.alice!, ['bob', 'carol'], world.tokens),
      await sharedThread(world.instances[1]!, world.tokens.alice!, ['bob', 'carol'], world.tokens),
    ];
    const sent = await raceAppends(threadIds, 3, 12);
    // A client retrying through another instance gets the stored envelope back, not a second event.
    const first = {
      type: 'acme.note',
      data: { by: 'instance-a', loop: 0, round: 0, k: 0 },
      clientEventId: 'instance-a-0-0-0',
    };
    const retry = await world.instances[2]!.as(world.tokens.alice!).post(`/v1/threads/${threadIds[0]}/events`, first);
    expect(retry.status).toBe(200);
    const stored = (await readAll(a, threadIds[0]!)).events.find((e) => e.clientEventId === first.clientEventId);
    expect(retry.body.events).toEqual([stored]);

    for (const threadId of threadIds) {
      const expected = sent.get(threadId)!;
      const views = await Promise.all(world.instances.map((instance) => readAll(instance, threadId)));
      for (const view of views) {
        expect(view.events.map((e) => e.seq)).toEqual(range(1, view.headSeq));
        const appended = view.events
          .filter((e) => e.clientEventId !== null)
          .map((e) => `${e.principalId}/${e.clientEventId}`);
        expect(new Set(appended).size).toBe(appended.length);
        expect([...appended].sort()).toEqual([...expected].sort());
        // The creator's participant_added, two grants, and what was appended.
        expect(view.headSeq).toBe(3 + appended.length);
      }
      expect(views[1]).toEqual(views[0]);
      expect(views[2]).toEqual(views[0]);
    }
  });

  it('a subscriber on each instance receives every event exactly once, in order, while appends race through the others', async () => {
    const threadIds = [
      await sharedThread(world.instances[0]!, world.tokens.alice!, ['bob', 'carol'], world.tokens),
      await sharedThread(world.instances[2]!, world.tokens.alice!, ['bob', 'carol'], world.tokens),
    ];
    const sockets: TestSocket[] = [];
    const early: Array<{ socket: TestSocket; threadId: string }> = [];
    for (const instance of world.instances) {
      for (const threadId of threadIds) {
        const socket = await instance.socket(world.tokens.bob!);
        sockets.push(socket);
        const subscribed = await subscribe(socket, 's', threadId, 0);
        expect(subscribed.type).toBe('subscribed');
        early.push({ socket, threadId });
      }
    }
    // Late subscribers join on every instance while the appends run: their backlog meets the live stream mid-race.
    const late: Array<{ socket: TestSocket; threadId: string }> = [];
    const joining = (async () => {
      await new Promise((r) => setTimeout(r, 150));
      for (const instance of world.instances) {
        const threadId = threadIds[late.length % threadIds.length]!;
        const socket = await instance.socket(world.tokens.carol!);
        sockets.push(socket);
        expect((await subscribe(socket, 'late', threadId, 0)).type).toBe('subscribed');
        late.push({ socket, threadId });
      }
    })();
    try {
      await Promise.all([raceAppends(threadIds, 2, 15), joining]);
      const heads = new Map<string, number>();
      for (const threadId of threadIds) heads.set(threadId, (await readAll(world.instances[1]!, threadId)).headSeq);
      await Promise.all([
        ...early.map(async ({ socket, threadId }) =>
          expect(await collectSeqs(socket, 's', 0, heads.get(threadId)!)).toEqual(range(1, heads.get(threadId)!)),
        ),
        ...late.map(async ({ socket, threadId }) =>
          expect(await collectSeqs(socket, 'late', 0, heads.get(threadId)!)).toEqual(range(1, heads.get(threadId)!)),
        ),
      ]);
    } finally {
      for (const socket of sockets) socket.close();
    }
  });
});
