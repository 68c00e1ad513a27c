import type { EventEnvelope } from '@bubble/protocol';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BubbleClient } from '../src/client/bubble-client.js';
import { startBotRuntime } from '../src/runtime/bot-runtime.js';
import { MemoryCheckpointStore } from '../src/runtime/checkpoint-store.js';
import type { ThreadHandler } from '../src/runtime/thread-runner.js';
import { sayRun, startRuntimeWorld, type RuntimeWorld, granted } from './support/runtime-world.js';

/** A bot's start with many threads (issue 19): one listing for their heads, a few started at a time. */
let world: RuntimeWorld;
const THREADS = 40;
const threads: Array<{ threadId: string; headSeq: number }> = [];

beforeAll(async () => {
  world = await startRuntimeWorld('bot-boot');
  for (let i = 0; i < THREADS; i++) {
    const { thread } = await world.alice.createThread({ title: `held ${i}` });
    const grant = granted(await world.alice.addParticipant(thread.threadId, world.botId, 'member'));
    threads.push({ threadId: thread.threadId, headSeq: grant.joinedSeq });
  }
}, 60_000);
afterAll(async () => {
  await world.close();
});

/** The bot's client, counting what the runtime asks of it over HTTP. */
function counted(client: BubbleClient) {
  const calls = { getThread: 0, listThreads: 0, readEvents: 0 };
  const wrapped = Object.assign(Object.create(client) as BubbleClient, {
    getThread: (...args: Parameters<BubbleClient['getThread']>) => {
      calls.getThread += 1;
      return client.getThread(...args);
    },
    listThreads: (...args: Parameters<BubbleClient['listThreads']>) => {
      calls.listThreads += 1;
      return client.listThreads(...args);
    },
    readEvents: (...args: Parameters<BubbleClient['readEvents']>) => {
      calls.readEvents += 1;
      return client.readEvents(...args);
    },
    subscribeThread: client.subscribeThread.bind(client),
    subscribeGrantsAsIterable: client.subscribeGrantsAsIterable.bind(client),
    putCursor: client.putCursor.bind(client),
  });
  return { client: wrapped, calls };
}

describe('a bot starting with many threads', () => {
  it('reads their heads in one listing, starts a few at a time, and says when it follows every one', async () => {
    const checkpoints = new MemoryCheckpointStore();
    for (const t of threads) await checkpoints.settle(t.threadId, t.headSeq);
    const { client, calls } = counted(world.botClient());
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    let starting = 0;
    let most = 0;
    const seen = new Map<string, EventEnvelope[]>();
    const runtime = startBotRuntime({
      client,
      principalId: world.botId,
      checkpoints,
      logger,
      startConcurrency: 4,
      handlerFactory: async (context): Promise<ThreadHandler> => {
        starting += 1;
        most = Math.max(most, starting);
        await new Promise((resolve) => setTimeout(resolve, 20));
        starting -= 1;
        seen.set(context.threadId, []);
        return { onEvent: (event) => void seen.get(context.threadId)!.push(event) };
      },
    });
    try {
      const deadline = Date.now() + 20_000;
      while (!lines.some((l) => l.msg === 'following every thread') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const boot = lines.find((l) => l.msg === 'following every thread');
      expect(boot).toMatchObject({ threads: THREADS, ms: expect.any(Number) });
      expect(calls).toEqual({ getThread: 0, listThreads: 1, readEvents: 0 });
      expect(most).toBe(4);
      // Each is live from its checkpoint: what is written next arrives, nothing before it.
      const target = threads[THREADS - 1]!;
      const run = await sayRun(world.alice, target.threadId, 'after-boot', 'hello');
      const deadline2 = Date.now() + 10_000;
      while ((seen.get(target.threadId)?.length ?? 0) < run.length && Date.now() < deadline2)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen.get(target.threadId)!.map((e) => e.seq)).toEqual(run.map((e) => (e as { seq: number }).seq));
    } finally {
      await runtime.stop();
    }
  }, 60_000);

  it('reads the head itself where the listing is older than the grant or the checkpoint', async () => {
    // A checkpoint above the listed head (the thread moved after the listing): the listing is not trusted.
    const moved = threads[0]!;
    await sayRun(world.alice, moved.threadId, 'moved', 'after the listing');
    const head = (await world.alice.getThread(moved.threadId)).headSeq;
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.settle(moved.threadId, head);
    const { client, calls } = counted(world.botClient());
    const stale = Object.assign(client, {
      listThreads: async () =>
        threads.map((t) => ({
          threadId: t.threadId,
          parentThreadId: null,
          title: null,
          createdBy: 'alice',
          createdAt: new Date().toISOString(),
          headSeq: t.headSeq,
        })),
    });
    const started = new Map<string, number>();
    const runtime = startBotRuntime({
      client: stale,
      principalId: world.botId,
      checkpoints,
      handlerFactory: (context) => {
        started.set(context.threadId, context.startAfterSeq);
        return { onEvent: () => undefined };
      },
    });
    try {
      const deadline = Date.now() + 20_000;
      while (started.size < THREADS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(started.get(moved.threadId)).toBe(head);
      // Only that thread's head was read; every other came from the listing.
      expect(calls.getThread).toBe(1);
    } finally {
      await runtime.stop();
    }
  }, 60_000);
});
