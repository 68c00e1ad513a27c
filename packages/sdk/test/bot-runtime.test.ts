import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryCheckpointStore, SqliteCheckpointStore } from '../src/runtime/checkpoint-store.js';
import { startBotRuntime, type BotRuntime, type BotRuntimeOptions } from '../src/runtime/bot-runtime.js';
import type { BotRuntimeLive } from '../src/runtime/thread-runner.js';
import type { EventEnvelope } from '@bubble/protocol';
import { pino } from 'pino';
import { BubbleClient } from '../src/client/bubble-client.js';
import { DrainBuffer } from '../src/drain/drain-buffer.js';
import {
  appendFiller,
  FAST_LIVE,
  HandlerRegistry,
  sayRun,
  startRuntimeWorld,
  type RuntimeWorld,
  granted,
} from './support/runtime-world.js';

let world: RuntimeWorld;
const dirs: string[] = [];
const runtimes: BotRuntime[] = [];

beforeAll(async () => {
  world = await startRuntimeWorld();
});
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.stop();
});
afterAll(async () => {
  await world.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function storePath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bubble-runtime-'));
  dirs.push(dir);
  return join(dir, 'checkpoints.db');
}

function start(options: Omit<BotRuntimeOptions<BubbleClient>, 'client' | 'principalId'>): BotRuntime {
  const runtime = startBotRuntime({ client: world.botClient(), principalId: world.botId, ...options });
  runtimes.push(runtime);
  return runtime;
}

async function newThreadWithBot(title: string): Promise<{ threadId: string; joinedSeq: number }> {
  const { thread } = await world.alice.createThread({ title });
  const grant = granted(await world.alice.addParticipant(thread.threadId, world.botId, 'member'));
  return { threadId: thread.threadId, joinedSeq: grant.joinedSeq };
}

function expectConsecutive(seqs: number[], from: number, to: number): void {
  expect(seqs).toEqual(Array.from({ length: to - from + 1 }, (_, index) => from + index));
}

describe('bot runtime against the real server', () => {
  it('starts a handler when the bot is invited, from its join, and delivers each event once in order', async () => {
    const registry = new HandlerRegistry();
    start({ checkpoints: new MemoryCheckpointStore(), handlerFactory: registry.factory });
    const { thread } = await world.alice.createThread({ title: 'invite me' });
    await sayRun(world.alice, thread.threadId, 'before-join', 'said before the bot came');
    const grant = granted(await world.alice.addParticipant(thread.threadId, world.botId, 'member'));
    const handler = await registry.handler(thread.threadId);
    expect(handler.context.startAfterSeq).toBe(grant.joinedSeq - 1);
    expect(handler.context.checkpoint).toBeNull();

    const run = await sayRun(world.alice, thread.threadId, 'after-join', 'hello bot');
    const last = (run.at(-1) as { seq: number }).seq;
    await handler.until((h) => h.seqs.at(-1) === last, 'the run after the join');
    expectConsecutive(handler.seqs, grant.joinedSeq, last);
    expect(handler.events[0]?.type).toBe('participant_added');
    expect(handler.events.at(-1)?.type).toBe('run_finished');
  });

  it('starts handlers for grants the bot already holds', async () => {
    const first = await newThreadWithBot('held 1');
    const second = await newThreadWithBot('held 2');
    const registry = new HandlerRegistry();
    const runtime = start({ checkpoints: new MemoryCheckpointStore(), handlerFactory: registry.factory });
    await registry.handler(first.threadId);
    await registry.handler(second.threadId);
    expect(runtime.threads()).toEqual(expect.arrayContaining([first.threadId, second.threadId]));
  });

  it('stops the handler on revoke; a new invitation starts from the new join, not from the old checkpoint', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const registry = new HandlerRegistry();
    const runtime = start({ checkpoints, handlerFactory: registry.factory });
    const { threadId } = await newThreadWithBot('revoke me');
    const handler = await registry.handler(threadId);
    const run = await sayRun(world.alice, threadId, 'r1', 'hi');
    await handler.until((h) => h.seqs.at(-1) === run.at(-1)?.seq, 'the first run');
    // Kept (it may include the bot's own participant_removed), but ignored at the next join.
    expect(await checkpoints.get(threadId)).toBeGreaterThanOrEqual(run.at(-1)?.seq as number);

    await world.alice.removeParticipant(threadId, world.botId);
    await handler.until((h) => h.stopReason !== undefined, 'the stop');
    expect(handler.stopReason).toBe('revoked');
    await expect.poll(() => runtime.threads().includes(threadId)).toBe(false);
    // Kept (it may include the bot's own participant_removed), but ignored at the next join.
    expect(await checkpoints.get(threadId)).toBeGreaterThanOrEqual(run.at(-1)?.seq as number);

    await sayRun(world.alice, threadId, 'r2', 'while the bot was away');
    const grant = granted(await world.alice.addParticipant(threadId, world.botId, 'member'));
    await expect.poll(() => registry.handlers.get(threadId)?.length).toBe(2);
    const again = await registry.handler(threadId);
    expect(again.context.checkpoint).toBeNull();
    await again.until((h) => h.seqs.includes(grant.joinedSeq), 'the new join');
    expect(again.seqs[0]).toBe(grant.joinedSeq);
  });

  it('forgetOnRevoke deletes the checkpoint when the grant is revoked', async () => {
    const checkpoints = new MemoryCheckpointStore();
    const registry = new HandlerRegistry();
    start({ checkpoints, handlerFactory: registry.factory, forgetOnRevoke: true });
    const { threadId, joinedSeq } = await newThreadWithBot('forget me');
    const handler = await registry.handler(threadId);
    await handler.until((h) => h.seqs.includes(joinedSeq), 'the join');
    expect(await checkpoints.get(threadId)).toBe(joinedSeq);
    await world.alice.removeParticipant(threadId, world.botId);
    await handler.until((h) => h.stopReason !== undefined, 'the stop');
    await expect.poll(() => checkpoints.get(threadId)).toBeNull();
  });

  it('a new runtime on the same durable store resumes right after the checkpoint', async () => {
    const path = storePath();
    const { threadId } = await newThreadWithBot('resume');
    const firstStore = new SqliteCheckpointStore({ path });
    const firstRegistry = new HandlerRegistry();
    const first = start({ checkpoints: firstStore, handlerFactory: firstRegistry.factory });
    const firstHandler = await firstRegistry.handler(threadId);
    const run = await sayRun(world.alice, threadId, 'r1', 'first life');
    const settled = run.at(-1)?.seq as number;
    await firstHandler.until((h) => h.seqs.at(-1) === settled, 'the first run');
    await first.stop();
    expect(firstHandler.stopReason).toBe('runtime_stopped');
    await firstStore.close();

    const later = await sayRun(world.alice, threadId, 'r2', 'while the bot was down');
    await appendFiller(world.alice, threadId, 3);
    const { headSeq } = await world.alice.getThread(threadId);

    const secondStore = new SqliteCheckpointStore({ path });
    const secondRegistry = new HandlerRegistry();
    start({ checkpoints: secondStore, handlerFactory: secondRegistry.factory });
    const secondHandler = await secondRegistry.handler(threadId);
    expect(secondHandler.context.checkpoint).toBe(settled);
    expect(secondHandler.context.startAfterSeq).toBe(settled);
    await secondHandler.until((h) => h.seqs.at(-1) === headSeq, 'the head');
    expectConsecutive(secondHandler.seqs, settled + 1, headSeq);
    expect(secondHandler.seqs[0]).toBe(later[0]?.seq);
    expect(new Set([...firstHandler.seqs, ...secondHandler.seqs]).size).toBe(
      firstHandler.seqs.length + secondHandler.seqs.length,
    );
  });

  it('resumes from the settled seq, not from what was delivered nor from the server cursor', async () => {
    const path = storePath();
    const { threadId } = await newThreadWithBot('settle explicitly');
    const run = await sayRun(world.alice, threadId, 'r1', 'settle me');
    const settleUpTo = run[0]?.seq as number;
    const store = new SqliteCheckpointStore({ path });
    const registry = new HandlerRegistry((event) => event.seq <= settleUpTo);
    const first = start({ checkpoints: store, handlerFactory: registry.factory });
    const handler = await registry.handler(threadId);
    await handler.until((h) => h.seqs.at(-1) === run.at(-1)?.seq, 'the run');
    await first.stop();
    await store.close();
    // The receipt moved with the settlement only.
    const botClient = world.botClient();
    expect(await botClient.getCursor(threadId)).toBe(settleUpTo);

    const reopened = new SqliteCheckpointStore({ path });
    const second = new HandlerRegistry();
    start({ checkpoints: reopened, handlerFactory: second.factory });
    const again = await second.handler(threadId);
    await again.until((h) => h.seqs.at(-1) === run.at(-1)?.seq, 'the redelivered tail');
    expect(again.seqs).toEqual(run.slice(1).map((event) => event.seq));
  });

  it('a lost store falls back to onFirstJoin even when the server cursor is ahead', async () => {
    const { threadId, joinedSeq } = await newThreadWithBot('lost store');
    await sayRun(world.alice, threadId, 'r1', 'one');
    const botClient = world.botClient();
    const { headSeq } = await botClient.getThread(threadId);
    await botClient.putCursor(threadId, headSeq);

    const registry = new HandlerRegistry();
    start({ checkpoints: new MemoryCheckpointStore(), handlerFactory: registry.factory });
    const handler = await registry.handler(threadId);
    expect(handler.context.checkpoint).toBeNull();
    expect(handler.context.startAfterSeq).toBe(joinedSeq - 1);
    await handler.until((h) => h.seqs.at(-1) === headSeq, 'the head');
  });

  it('skip_to_head delivers only what comes next', async () => {
    const { threadId } = await newThreadWithBot('skip');
    await sayRun(world.alice, threadId, 'old', 'old news');
    const { headSeq } = await world.alice.getThread(threadId);
    const registry = new HandlerRegistry();
    start({
      checkpoints: new MemoryCheckpointStore(),
      handlerFactory: registry.factory,
      backlog: { onFirstJoin: 'skip_to_head' },
    });
    const handler = await registry.handler(threadId);
    expect(handler.context.startAfterSeq).toBe(headSeq);
    const fresh = await sayRun(world.alice, threadId, 'new', 'fresh');
    await handler.until((h) => h.seqs.at(-1) === fresh.at(-1)?.seq, 'the fresh run');
    expect(handler.seqs).toEqual(fresh.map((event) => event.seq));
  });

  it('catch_up replays at most maxReplay events, widened to the start of a run across the window edge', async () => {
    const path = storePath();
    const { threadId } = await newThreadWithBot('window');
    const store = new SqliteCheckpointStore({ path, scope: world.botId });
    const { headSeq: settled } = await world.alice.getThread(threadId);
    await store.settle(threadId, settled);
    await appendFiller(world.alice, threadId, 30);
    // A run that starts before the last 10 events and ends inside them.
    const [started] = (await world.alice.appendEvents(threadId, [{ type: 'run_started', data: { runId: 'long' } }]))
      .events;
    await appendFiller(world.alice, threadId, 5);
    await world.alice.appendEvents(threadId, [
      { type: 'message_part', data: { runId: 'long', chunk: { type: 'text-delta', id: 't', delta: 'long run' } } },
      { type: 'run_finished', data: { runId: 'long', status: 'completed' } },
    ]);
    await appendFiller(world.alice, threadId, 6);
    const { headSeq } = await world.alice.getThread(threadId);
    expect(headSeq - (started?.seq as number)).toBeGreaterThan(10);

    const registry = new HandlerRegistry();
    start({ checkpoints: store, handlerFactory: registry.factory, backlog: { maxReplay: 10 } });
    const handler = await registry.handler(threadId);
    expect(handler.context.startAfterSeq).toBe((started?.seq as number) - 1);
    await handler.until((h) => h.seqs.at(-1) === headSeq, 'the head');
    expect(handler.events[0]?.type).toBe('run_started');
    expectConsecutive(handler.seqs, started?.seq as number, headSeq);
    await store.close();
  });

  it('a handler that throws does not stop the thread', async () => {
    const { threadId } = await newThreadWithBot('throwing handler');
    let calls = 0;
    const seen: number[] = [];
    start({
      checkpoints: new MemoryCheckpointStore(),
      handlerFactory: (context) => ({
        onEvent(event) {
          if (context.threadId !== threadId) return;
          calls += 1;
          seen.push(event.seq);
          if (calls === 1) throw new Error('handler bug');
        },
      }),
    });
    const run = await sayRun(world.alice, threadId, 'r1', 'still delivered');
    await expect.poll(() => seen.at(-1), { timeout: 20_000 }).toBe(run.at(-1)?.seq);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses to settle beyond what was delivered', async () => {
    const { threadId } = await newThreadWithBot('settle too far');
    const registry = new HandlerRegistry(false);
    start({ checkpoints: new MemoryCheckpointStore(), handlerFactory: registry.factory });
    const handler = await registry.handler(threadId);
    await handler.until((h) => h.events.length > 0, 'the first event');
    await expect(handler.context.settle((handler.seqs.at(-1) as number) + 5)).rejects.toThrow(/only up to/);
  });

  it('repairs a faulty stream: a repeated event is dropped and a skipped one is read over HTTP', async () => {
    const { threadId, joinedSeq } = await newThreadWithBot('faulty stream');
    const client = world.botClient();
    // The real live subscription, with faults injected between it and the runtime.
    const faulty: BotRuntimeLive = {
      subscribeGrantsAsIterable: (options) => client.subscribeGrantsAsIterable(options),
      subscribeThread: (id, options) => {
        const real = client.subscribeThread(id, options);
        if (id !== threadId) return real;
        async function* inject(): AsyncGenerator<EventEnvelope> {
          for await (const event of real) {
            if (event.seq === joinedSeq + 2) continue; // lost
            yield event;
            if (event.seq === joinedSeq + 4) yield event; // repeated
          }
        }
        return Object.assign(inject(), { endReason: undefined }) as unknown as ReturnType<
          BotRuntimeLive['subscribeThread']
        >;
      },
    };
    const registry = new HandlerRegistry();
    const logs: Array<{ msg: string }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line) as { msg: string }) });
    runtimes.push(
      startBotRuntime({
        client,
        live: faulty,
        principalId: world.botId,
        checkpoints: new MemoryCheckpointStore(),
        handlerFactory: registry.factory,
        logger,
      }),
    );
    const handler = await registry.handler(threadId);
    await appendFiller(world.alice, threadId, 8);
    const { headSeq } = await world.alice.getThread(threadId);
    await handler.until((h) => h.seqs.at(-1) === headSeq, 'the head');
    expectConsecutive(handler.seqs, joinedSeq, headSeq);
    // Both faults were met (and repaired), not merely absent.
    expect(logs.map((entry) => entry.msg)).toEqual(
      expect.arrayContaining([
        'gap in the stream; reading the missing events',
        'event delivered twice by the stream; dropped',
      ]),
    );
  });

  it('ends with an error when the bot’s credential is revoked, stopping every thread', async () => {
    const { token } = await world.alice.createBot({ principalId: 'bot-doomed' });
    const { thread } = await world.alice.createThread({ title: 'doomed' });
    await world.alice.addParticipant(thread.threadId, 'bot-doomed', 'member');
    const client = new BubbleClient({ url: world.server.url, token: token.token, live: FAST_LIVE });
    const registry = new HandlerRegistry();
    const runtime = startBotRuntime({
      client,
      principalId: 'bot-doomed',
      checkpoints: new MemoryCheckpointStore(),
      handlerFactory: registry.factory,
    });
    const handler = await registry.handler(thread.threadId);
    await handler.until((h) => h.events.length > 0, 'the first event');
    await world.alice.revokeAllTokens('bot-doomed');
    const end = await runtime.done;
    expect(end.kind).toBe('failed');
    expect(handler.stopReason).toBeDefined();
    expect(['failed', 'runtime_stopped']).toContain(handler.stopReason);
    expect(runtime.threads()).toEqual([]);
    client.close();
  });

  it('an echo bot: drains finished runs, replies through ctx.client, never answers itself, settles what it drained', async () => {
    const { threadId } = await newThreadWithBot('echo');
    const checkpoints = new MemoryCheckpointStore();
    let replies = 0;
    start({
      checkpoints,
      handlerFactory: (ctx) => {
        const buffer = new DrainBuffer({ selfPrincipalId: ctx.principalId });
        return {
          async onEvent(event) {
            if (ctx.threadId !== threadId) return;
            buffer.observe(event);
            const payload = buffer.drain();
            if (payload.text !== '') {
              replies += 1;
              const runId = `echo-${replies}`;
              await ctx.client.appendEvents(ctx.threadId, [
                { type: 'run_started', data: { runId, replyTo: [...payload.replyTo] } },
                {
                  type: 'message_part',
                  data: { runId, chunk: { type: 'text-delta', id: 't', delta: `echo: ${payload.text}` } },
                },
                { type: 'run_finished', data: { runId, status: 'completed' } },
              ]);
            }
            await ctx.settle(buffer.drainedThrough);
          },
        };
      },
    });
    // A run that streams in three appends: nothing is drained until it finishes.
    await world.alice.appendEvents(threadId, [{ type: 'run_started', data: { runId: 'q' } }]);
    await world.alice.appendEvents(threadId, [
      { type: 'message_part', data: { runId: 'q', chunk: { type: 'text-delta', id: 't', delta: 'ping ' } } },
    ]);
    await world.alice.appendEvents(threadId, [
      { type: 'message_part', data: { runId: 'q', chunk: { type: 'text-delta', id: 't', delta: 'pong' } } },
      { type: 'run_finished', data: { runId: 'q', status: 'completed' } },
    ]);
    const reply = async () =>
      (await world.alice.readEvents(threadId, { after: 0 })).events.filter(
        (event) => event.principalId === world.botId && event.type === 'message_part',
      );
    await expect.poll(async () => (await reply()).length, { timeout: 20_000 }).toBe(1);
    expect((await reply())[0]?.data.chunk).toMatchObject({ delta: 'echo: alice: ping pong' });
    // The bot's own reply came back through its stream and was settled, not answered.
    const { headSeq } = await world.alice.getThread(threadId);
    await expect.poll(() => checkpoints.get(threadId), { timeout: 20_000 }).toBe(headSeq);
    expect(replies).toBe(1);
  });
});
