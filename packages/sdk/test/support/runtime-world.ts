import type { EventEnvelope, Grant } from '@bubble/protocol';
import { startTestServer, type TestServer } from '@bubble/server/testing';
import { BubbleClient, type AddParticipantResult } from '../../src/client/bubble-client.js';
import type { ThreadContext, ThreadHandler, ThreadStopReason } from '../../src/runtime/thread-runner.js';

/** Fast reconnects for tests (the defaults are for production). */
export const FAST_LIVE = {
  reconnectBaseMs: 50,
  reconnectCapMs: 500,
  heartbeatIntervalMs: 2_000,
  heartbeatTimeoutMs: 2_000,
} as const;
export const FAST_RETRY = { attempts: 8, baseMs: 50, capMs: 500 } as const;

/** The grant an add made; fails the test when the server made a pending invitation instead (Consent). */
export function granted(result: AddParticipantResult): Grant {
  if (result.status !== 'granted')
    throw new Error(`expected a grant, got a pending invitation for ${result.invitation.principalId}`);
  return result.grant;
}

export interface RuntimeWorld {
  readonly server: TestServer;
  /** A human who owns the bot and its threads. */
  readonly alice: BubbleClient;
  readonly botId: string;
  readonly botToken: string;
  /** A fresh client for the bot (each runtime gets its own live connection). */
  botClient(): BubbleClient;
  close(): Promise<void>;
}

export async function startRuntimeWorld(botId = 'bot-runtime'): Promise<RuntimeWorld> {
  const server = await startTestServer();
  const human = await server.createHuman('alice', 'Alice');
  const alice = new BubbleClient({ url: server.url, token: human.token.token, retry: FAST_RETRY });
  const { token } = await alice.createBot({ principalId: botId, displayName: 'Runtime bot' });
  const clients: BubbleClient[] = [alice];
  return {
    server,
    alice,
    botId,
    botToken: token.token,
    botClient() {
      const client = new BubbleClient({ url: server.url, token: token.token, retry: FAST_RETRY, live: FAST_LIVE });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) client.close();
      await server.stop();
    },
  };
}

/** A handler that records what it gets, and settles each event (or not, per `settleEach`). */
export class RecordingHandler implements ThreadHandler {
  readonly events: EventEnvelope[] = [];
  stopReason: ThreadStopReason | undefined;
  readonly #waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  readonly #settleEach: boolean | ((event: EventEnvelope) => boolean);

  constructor(
    readonly context: ThreadContext,
    settleEach: boolean | ((event: EventEnvelope) => boolean) = true,
  ) {
    this.#settleEach = settleEach;
  }

  get seqs(): number[] {
    return this.events.map((event) => event.seq);
  }

  async onEvent(event: EventEnvelope): Promise<void> {
    this.events.push(event);
    const settle = typeof this.#settleEach === 'function' ? this.#settleEach(event) : this.#settleEach;
    if (settle) await this.context.settle(event.seq);
    this.#check();
  }

  stop(reason: ThreadStopReason): void {
    this.stopReason = reason;
    this.#check();
  }

  /** Resolves once `test` holds (checked after every event and on stop). */
  until(test: (handler: this) => boolean, label: string, timeoutMs = 20_000): Promise<void> {
    if (test(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${label}; seqs so far: ${this.seqs.join(',')}`)),
        timeoutMs,
      );
      this.#waiters.push({
        test: () => test(this),
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  #check(): void {
    for (const waiter of [...this.#waiters]) {
      if (waiter.test()) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }
}

/** Collects handlers by thread id as the runtime creates them, and lets a test wait for one. */
export class HandlerRegistry {
  readonly handlers = new Map<string, RecordingHandler[]>();
  readonly #waiters: Array<{ threadId: string; resolve: (handler: RecordingHandler) => void }> = [];
  readonly #settleEach: boolean | ((event: EventEnvelope) => boolean);

  constructor(settleEach: boolean | ((event: EventEnvelope) => boolean) = true) {
    this.#settleEach = settleEach;
  }

  readonly factory = (context: ThreadContext): RecordingHandler => {
    const handler = new RecordingHandler(context, this.#settleEach);
    const list = this.handlers.get(context.threadId) ?? [];
    list.push(handler);
    this.handlers.set(context.threadId, list);
    for (const waiter of [...this.#waiters]) {
      if (waiter.threadId === context.threadId) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(handler);
      }
    }
    return handler;
  };

  /** The latest handler of the thread, waiting for it to be created if needed. */
  handler(threadId: string, timeoutMs = 20_000): Promise<RecordingHandler> {
    const existing = this.handlers.get(threadId)?.at(-1);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no handler for ${threadId}`)), timeoutMs);
      this.#waiters.push({
        threadId,
        resolve: (handler) => {
          clearTimeout(timer);
          resolve(handler);
        },
      });
    });
  }
}

/** One complete run by the client's principal: run_started, text deltas, run_finished. */
export async function sayRun(
  client: BubbleClient,
  threadId: string,
  runId: string,
  text: string,
): Promise<EventEnvelope[]> {
  const { events } = await client.appendEvents(threadId, [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
    { type: 'run_finished', data: { runId, status: 'completed' } },
  ]);
  return events;
}

/** `n` custom events (one per request), e.g. to grow a thread. */
export async function appendFiller(client: BubbleClient, threadId: string, n: number): Promise<void> {
  const events = Array.from({ length: n }, (_, index) => ({ type: 'test.filler', data: { n: index } }));
  await client.appendEvents(threadId, events);
}
