import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { BubbleClient } from '../src/client/bubble-client.js';
import { SqliteCheckpointStore } from '../src/runtime/checkpoint-store.js';
import { startBotRuntime, type BotRuntime } from '../src/runtime/bot-runtime.js';
import { FAST_LIVE, HandlerRegistry, granted } from './support/runtime-world.js';
import { createHumanWithCli, freePort, startServerProcess, type ServerProcess } from './support/server-process.js';

const TICKS = 240;
const KILL_AFTER = 100;
const AFTER_RESTART = 15;

const dir = mkdtempSync(join(tmpdir(), 'bubble-kill9-'));
const cleanup: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  rmSync(dir, { recursive: true, force: true });
});

/** Appends tick `i` until the server takes it; the fixed clientEventId makes every retry safe. */
async function appendTick(client: BubbleClient, threadId: string, i: number): Promise<void> {
  for (;;) {
    try {
      await client.appendEvents(threadId, [{ type: 'test.tick', data: { i }, clientEventId: `tick-${i}` }]);
      return;
    } catch {
      await sleep(25);
    }
  }
}

describe('bot runtime across a kill -9 of the server binary', () => {
  it('loses no event, delivers none twice, and a new runtime resumes from the checkpoint', async () => {
    const dataDir = join(dir, 'data');
    const port = await freePort();
    const aliceToken = await createHumanWithCli(dataDir, 'alice');
    let server: ServerProcess = await startServerProcess(dataDir, port);
    cleanup.push(() => server.stop());

    // Appends are retried by the test itself (through the outage), never by the client.
    const alice = new BubbleClient({ url: server.url, token: aliceToken, retry: false, timeoutMs: 2_000 });
    const { token: botToken } = await alice.createBot({ principalId: 'bot-kill9' });
    const { thread } = await alice.createThread({ title: 'kill -9' });
    const threadId = thread.threadId;
    const grant = granted(await alice.addParticipant(threadId, 'bot-kill9', 'member'));

    const storePath = join(dir, 'bot', 'checkpoints.db');
    const store = new SqliteCheckpointStore({ path: storePath, scope: 'bot-kill9' });
    const registry = new HandlerRegistry();
    const liveStates: string[] = [];
    const botClient = new BubbleClient({
      url: server.url,
      token: botToken.token,
      live: { ...FAST_LIVE, onStateChange: (state) => liveStates.push(state) },
      retry: { attempts: 4, baseMs: 50, capMs: 300 },
    });
    const logs: Array<{ msg: string }> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logs.push(JSON.parse(line) as { msg: string }) });
    let runtime: BotRuntime = startBotRuntime({
      client: botClient,
      principalId: 'bot-kill9',
      checkpoints: store,
      handlerFactory: registry.factory,
      logger,
    });
    cleanup.push(() => runtime.stop());
    const handler = await registry.handler(threadId);

    // The stream: the producer appends ticks while the server is killed and restarted under it.
    let killed = false;
    const producer = (async () => {
      for (let i = 0; i < TICKS; i += 1) {
        await appendTick(alice, threadId, i);
        if (i === KILL_AFTER) {
          await server.kill9();
          killed = true;
          await sleep(300);
          server = await startServerProcess(dataDir, port);
        }
      }
    })();
    await producer;
    expect(killed).toBe(true);

    const { headSeq } = await alice.getThread(threadId);
    await handler.until((h) => h.seqs.at(-1) === headSeq, 'the head after the restart', 60_000);

    // Every seq from the join to the head, each exactly once, in order; every tick exactly once.
    expect(handler.seqs).toEqual(
      Array.from({ length: headSeq - grant.joinedSeq + 1 }, (_, index) => grant.joinedSeq + index),
    );
    const ticks = handler.events.filter((event) => event.type === 'test.tick').map((event) => event.data.i);
    expect(ticks).toEqual(Array.from({ length: TICKS }, (_, index) => index));
    // The bot's live connection really dropped and came back.
    expect(liveStates.filter((state) => state === 'waiting').length).toBeGreaterThanOrEqual(1);
    expect(liveStates.at(-1)).toBe('ready');
    // Exactly-once came from the live subscription itself: the runtime's own repairs never ran.
    expect(logs.map((entry) => entry.msg)).not.toContain('gap in the stream; reading the missing events');
    expect(logs.map((entry) => entry.msg)).not.toContain('event delivered twice by the stream; dropped');
    // The same handler carried on through the outage: the thread was not restarted.
    expect(registry.handlers.get(threadId)).toHaveLength(1);
    expect(await store.get(threadId)).toBe(headSeq);

    // A runtime restart: a new instance, a new client, the same durable store file.
    await runtime.stop();
    await store.close();
    for (let i = TICKS; i < TICKS + AFTER_RESTART; i += 1) await appendTick(alice, threadId, i);
    const { headSeq: newHead } = await alice.getThread(threadId);

    const reopened = new SqliteCheckpointStore({ path: storePath, scope: 'bot-kill9' });
    cleanup.push(() => reopened.close());
    const nextRegistry = new HandlerRegistry();
    const nextClient = new BubbleClient({ url: server.url, token: botToken.token, live: FAST_LIVE });
    cleanup.push(() => nextClient.close());
    runtime = startBotRuntime({
      client: nextClient,
      principalId: 'bot-kill9',
      checkpoints: reopened,
      handlerFactory: nextRegistry.factory,
    });
    const resumed = await nextRegistry.handler(threadId);
    expect(resumed.context.checkpoint).toBe(headSeq);
    await resumed.until((h) => h.seqs.at(-1) === newHead, 'the ticks appended while the bot was down');
    expect(resumed.seqs).toEqual(Array.from({ length: newHead - headSeq }, (_, index) => headSeq + 1 + index));
    alice.close();
    botClient.close();
  }, 120_000);
});
