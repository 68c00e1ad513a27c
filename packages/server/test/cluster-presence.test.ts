/**
 * Presence across real instances on one database: a bot's socket on A shows on B (the participants
 * route and `presence` frames on B's subscribers), its last socket closing on A too; a stranger's
 * does not reach the thread; a bot moving from A to B within the grace is told neither way; an
 * instance stopped with SIGTERM takes its principals offline at once, one killed with -9 within
 * the documented bound (15 s: a 10 s heartbeat expiry, a 2 s re-read, the 0.5 s grace).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createBot,
  nextPresence,
  onlineOn,
  sharedThread,
  startClusterWorld,
  subscribe,
  until,
  type ClusterWorld,
  type Instance,
} from './support/cluster-world.js';

let world: ClusterWorld;

beforeAll(async () => {
  world = await startClusterWorld('cluster-presence', { instances: 3 });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

/** The longest an instance killed with -9 keeps its principals online elsewhere (README, "Presence"). */
const KILL_BOUND_MS = 15_000;
/** A change on one instance reaching another: a NOTIFY (or a 250 ms poll), then the 500 ms grace for going offline. */
const ACROSS_MS = 3_000;

/** Every presence frame `socket` gets over `ms`. */
async function presenceOver(socket: Awaited<ReturnType<Instance['socket']>>, ms: number) {
  await new Promise((r) => setTimeout(r, ms));
  return (await socket.roundTrip()).filter((frame) => frame.type === 'presence');
}

describe('presence across instances', () => {
  it('a bot online on A is online on B, in the participants route and in presence frames; a stranger is told nowhere', async () => {
    const [a, b] = world.instances as [Instance, Instance];
    const botToken = await createBot(a, world.tokens.alice!, 'bot-a');
    const threadId = await sharedThread(a, world.tokens.alice!, ['bot-a']);
    const watcher = await b.socket(world.tokens.alice!);
    try {
      expect((await subscribe(watcher, 'w', threadId)).type).toBe('subscribed');
      expect(await onlineOn(b, world.tokens.alice!, threadId)).toEqual({ alice: true, 'bot-a': false });

      const started = performance.now();
      const botSocket = await a.socket(botToken);
      expect(await nextPresence(watcher, ACROSS_MS)).toEqual({
        type: 'presence',
        id: 'w',
        principalId: 'bot-a',
        online: true,
      });
      expect(performance.now() - started).toBeLessThan(ACROSS_MS);
      expect(await onlineOn(b, world.tokens.alice!, threadId)).toEqual({ alice: true, 'bot-a': true });

      // carol holds no grant on the thread: her socket on A reaches nobody on B.
      const carols = await a.socket(world.tokens.carol!);
      expect(await presenceOver(watcher, 1_000)).toEqual([]);
      carols.close();

      const closedAt = performance.now();
      botSocket.close();
      expect(await nextPresence(watcher, ACROSS_MS)).toMatchObject({ principalId: 'bot-a', online: false });
      expect(performance.now() - closedAt).toBeLessThan(ACROSS_MS);
      expect(await onlineOn(b, world.tokens.alice!, threadId)).toEqual({ alice: true, 'bot-a': false });
      expect(await presenceOver(watcher, 1_000)).toEqual([]);
    } finally {
      watcher.close();
    }
  });

  it('a bot that moves from A to B within the grace is told neither way', async () => {
    const [a, b] = world.instances as [Instance, Instance];
    const botToken = await createBot(a, world.tokens.alice!, 'bot-move');
    const threadId = await sharedThread(a, world.tokens.alice!, ['bot-move']);
    const onA = await a.socket(botToken);
    const watcher = await b.socket(world.tokens.alice!);
    try {
      expect((await subscribe(watcher, 'w', threadId)).type).toBe('subscribed');
      await until(
        async () => ((await onlineOn(b, world.tokens.alice!, threadId))['bot-move'] ? true : undefined),
        'bot-move online on B',
      );
      // B may have heard of it only after the subscription joined: that frame is not the move's.
      const before = await presenceOver(watcher, 300);
      expect(before.every((f) => f.principalId === 'bot-move' && f.online === true)).toBe(true);
      onA.close();
      await onA.closed;
      const onB = await b.socket(botToken);
      expect(await presenceOver(watcher, 1_500)).toEqual([]);
      expect((await onlineOn(a, world.tokens.alice!, threadId))['bot-move']).toBe(true);
      onB.close();
    } finally {
      watcher.close();
    }
  });

  it('an instance stopped with SIGTERM takes its principals offline at once; one killed with -9 within the bound', async () => {
    const [a, b, c] = world.instances as [Instance, Instance, Instance];
    const killed = await createBot(a, world.tokens.alice!, 'bot-killed');
    const stopped = await createBot(a, world.tokens.alice!, 'bot-stopped');
    const threadId = await sharedThread(a, world.tokens.alice!, ['bot-killed', 'bot-stopped']);
    const watcher = await b.socket(world.tokens.alice!);
    try {
      expect((await subscribe(watcher, 'w', threadId)).type).toBe('subscribed');
      await a.socket(killed);
      await c.socket(stopped);
      const online = [await nextPresence(watcher, ACROSS_MS), await nextPresence(watcher, ACROSS_MS)];
      expect(online.map((f) => [f.principalId, f.online]).sort()).toEqual([
        ['bot-killed', true],
        ['bot-stopped', true],
      ]);

      const stopAt = performance.now();
      await c.stop();
      expect(await nextPresence(watcher, ACROSS_MS)).toMatchObject({ principalId: 'bot-stopped', online: false });
      expect(performance.now() - stopAt).toBeLessThan(ACROSS_MS);

      const killAt = performance.now();
      await a.kill();
      expect(await nextPresence(watcher, KILL_BOUND_MS)).toMatchObject({ principalId: 'bot-killed', online: false });
      expect(performance.now() - killAt).toBeLessThan(KILL_BOUND_MS);
      expect(await onlineOn(b, world.tokens.alice!, threadId)).toEqual({
        alice: true,
        'bot-killed': false,
        'bot-stopped': false,
      });
    } finally {
      watcher.close();
    }
  }, 40_000);
});
