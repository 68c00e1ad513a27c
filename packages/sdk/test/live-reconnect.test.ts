import { startTestServer, type TestServer } from '@bubble/server/testing';
import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { BubbleClient, type LiveState } from '../src/index.js';
import { range, seqs, take, waitUntil } from './support/live-helpers.js';

let server: TestServer | undefined;
const clients: BubbleClient[] = [];

afterEach(async () => {
  for (const made of clients.splice(0)) made.close();
  await server?.stop();
  server = undefined;
});

describe('reconnect across server restarts', () => {
  it('delivers every event exactly once, in order, while the server restarts three times mid-stream', async () => {
    server = await startTestServer();
    const running = server;
    const { token } = await running.createHuman('alice');
    // The writer rides out the restarts with retries; its client event ids keep them from duplicating.
    const writer = new BubbleClient({
      url: running.url,
      token: token.token,
      retry: { attempts: 40, baseMs: 25, capMs: 250 },
    });
    const states: LiveState[] = [];
    const reader = new BubbleClient({
      url: running.url,
      token: token.token,
      live: { reconnectBaseMs: 25, reconnectCapMs: 250, onStateChange: (state) => states.push(state) },
    });
    clients.push(writer, reader);
    const { thread } = await writer.createThread({ title: 'restarts' });
    const subscription = reader.subscribeThread(thread.threadId);

    const batches = 40;
    const perBatch = 5;
    let written = 0;
    const writing = (async () => {
      for (let batch = 0; batch < batches; batch += 1) {
        await writer.appendEvents(
          thread.threadId,
          Array.from({ length: perBatch }, (_, i) => ({ type: 'test.step', data: { n: batch * perBatch + i } })),
        );
        written += perBatch;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    const received: EventEnvelope[] = [];
    const total = 1 + batches * perBatch;
    const reading = (async () => {
      while (received.length < total) received.push(...(await take(subscription, 1)));
    })();

    for (const threshold of [40, 90, 140]) {
      await waitUntil(() => received.length >= threshold, `the reader got ${threshold} events`);
      await running.restart();
    }
    await writing;
    await reading;

    expect(written).toBe(batches * perBatch);
    expect(seqs(received)).toEqual(range(1, total));
    expect(received.slice(1).map((e) => e.data.n)).toEqual(range(0, batches * perBatch - 1));
    // The log itself holds each step once: nothing was appended twice by the writer's retries.
    const head = await writer.readEvents(thread.threadId, { after: total - 1 });
    expect(head.headSeq).toBe(total);
    expect(states.filter((state) => state === 'waiting').length).toBeGreaterThanOrEqual(3);
  });
});
