import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '@bubble/protocol';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { BubbleClient, type LiveState } from '../src/index.js';
import { range, seqs, take, waitUntil } from './support/live-helpers.js';
import { createHumanWithCli, freePort, startServerProcess, type ServerProcess } from './support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'bubble-live-kill9-'));
const cleanup: Array<() => Promise<void> | void> = [];

afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
  rmSync(dir, { recursive: true, force: true });
});

describe('live subscription across kill -9 of the server binary', () => {
  it('delivers every event exactly once and in order, and retried appends never duplicate', async () => {
    const dataDir = join(dir, 'data');
    const port = await freePort();
    const token = await createHumanWithCli(dataDir, 'alice');
    let server: ServerProcess = await startServerProcess(dataDir, port);
    cleanup.push(() => server.stop());

    // The writer relies on the client's own retries (and its client event ids) through the outage.
    const retries: string[] = [];
    const logSink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        const entry = JSON.parse(chunk.toString()) as { msg?: string; code?: string };
        if (entry.msg === 'bubble request failed; retrying') retries.push(entry.code ?? '');
        done();
      },
    });
    const writer = new BubbleClient({
      url: server.url,
      token,
      timeoutMs: 2_000,
      retry: { attempts: 60, baseMs: 50, capMs: 250 },
      logger: pino({ level: 'warn' }, logSink),
    });
    const states: LiveState[] = [];
    const reader = new BubbleClient({
      url: server.url,
      token,
      live: { reconnectBaseMs: 50, reconnectCapMs: 250, onStateChange: (state) => states.push(state) },
    });
    cleanup.push(() => {
      writer.close();
      reader.close();
    });
    const { thread } = await writer.createThread({ title: 'kill -9' });
    const subscription = reader.subscribeThread(thread.threadId);

    const steps = 150;
    const writing = (async () => {
      for (let n = 0; n < steps; n += 1) {
        await writer.appendEvent(thread.threadId, { type: 'test.step', data: { n } });
      }
    })();
    const received: EventEnvelope[] = [];
    const reading = (async () => {
      while (received.length < steps + 1) received.push(...(await take(subscription, 1)));
    })();

    await waitUntil(() => received.length >= 50, 'the reader got 50 events');
    await server.kill9();
    server = await startServerProcess(dataDir, port);
    await waitUntil(() => received.length >= 100, 'the reader got 100 events after the restart');
    await server.kill9();
    server = await startServerProcess(dataDir, port);
    await writing;
    await reading;

    expect(seqs(received)).toEqual(range(1, steps + 1));
    expect(received.slice(1).map((e) => e.data.n)).toEqual(range(0, steps - 1));
    const log = await writer.readEvents(thread.threadId, { after: steps - 1 });
    expect(log.headSeq).toBe(steps + 1);
    expect(states.filter((state) => state === 'waiting').length).toBeGreaterThanOrEqual(2);
    // The writer did go through the outages on its retries.
    expect(retries.length).toBeGreaterThan(0);
  });
});
