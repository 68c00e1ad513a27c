import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { TestApi } from './ws-test-api.js';
import { healthzMs } from '../testing/test-client.js';
import { TestSocket, type Frame } from './ws-test-client.js';

/** Attacks on the WebSocket by a signed-in client (issue 13), against the real server on loopback. */
let server: TestServer;
afterEach(async () => {
  await server.stop();
});

setFlagsFromString('--expose_gc');
/** A full collection, so a memory sample counts what is retained, not garbage not yet collected. */
const gc = runInNewContext('gc') as () => void;
const retained = (): number => {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
};

describe('error frames never echo unbounded input', () => {
  it('answers 120 one-megabyte frames of an unknown type with small errors, and serves everyone else meanwhile', async () => {
    server = await startTestServer();
    const alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.ws.pause();
    const junk = JSON.stringify({ type: 'x'.repeat(1024 * 1024 - 20) });
    expect(junk.length).toBeLessThanOrEqual(1024 * 1024);
    for (let i = 0; i < 120; i += 1) socket.ws.send(junk);
    // The server is still there for everyone else meanwhile.
    const other = await TestSocket.authenticated(server.wsUrl, alice.token);
    expect(await other.socket.roundTrip()).toEqual([]);
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
    socket.ws.resume();
    const errors: Frame[] = [];
    for (let i = 0; i < 120; i += 1) errors.push(await socket.next(() => true, 30_000));
    expect(errors).toHaveLength(120);
    for (const frame of errors) {
      expect(frame).toMatchObject({ type: 'error', error: { code: 'invalid_request' } });
      expect(JSON.stringify(frame).length).toBeLessThan(1024);
    }
    expect((errors[0]!.error as { message: string }).message).toMatch(
      /^unknown frame type "x{64}…" \(1048556 characters\); expected one of /,
    );
    // 120 MiB came in and under 120 KiB went back (the echo used to send 2 MiB per frame: 240 MiB queued for a client that does not read).
    expect(errors.reduce((sum, frame) => sum + JSON.stringify(frame).length, 0)).toBeLessThan(120 * 1024);
    other.socket.close();
    socket.close();
  });
});

describe('answers count toward the socket bound', () => {
  it('closes with 4008 a client that keeps sending bad frames and never reads the errors', async () => {
    // Frame rate limits off: this is about the socket's bound, not about the frame budget (ws-rate-limit.test.ts).
    server = await startTestServer({ ws: { maxBufferedBytes: 64 * 1024 }, rateLimits: { frames: false } });
    const alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.ws.pause();
    // ~12 MB of error frames: past what loopback TCP absorbs for a reader that stopped (see ws-subscribe's slow consumer).
    for (let i = 0; i < 60_000 && socket.ws.readyState === socket.ws.OPEN; i += 1) socket.ws.send('{"type":"nope"}');
    const other = await TestSocket.authenticated(server.wsUrl, alice.token);
    expect(await other.socket.roundTrip()).toEqual([]);
    expect(await healthzMs(server.url)).toBeLessThan(1_000);
    socket.ws.resume();
    expect((await socket.closed).code).toBe(4008);
    other.socket.close();
  });
});

describe('backlog subscriptions are paced by the socket, one page in hand at a time', () => {
  it('a client that never reads subscribes 40 times to its own 30 MB thread: memory stays bounded, others are served', async () => {
    server = await startTestServer();
    const alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
    const bob = new TestApi(server.url, (await server.createHuman('bob')).token.token);
    const thread = await alice.createThread({ title: 'big' });
    const pad = 'x'.repeat(60 * 1024);
    for (let i = 0; i < 500 / 10; i += 1) {
      await alice.append(
        thread.threadId,
        Array.from({ length: 10 }, () => ({ type: 'test.note', data: { pad } })),
      );
    }
    const { socket } = await TestSocket.authenticated(server.wsUrl, alice.token);
    socket.ws.pause();
    const baseline = retained();
    for (let i = 0; i < 40; i += 1)
      socket.send({ type: 'subscribe', id: `s${i}`, threadId: thread.threadId, afterSeq: 0 });
    // Everyone else is served meanwhile: health, appends and a live subscription of another person.
    const bobs = await bob.createThread({ title: 'unaffected' });
    const watcher = await TestSocket.authenticated(server.wsUrl, bob.token);
    watcher.socket.send({ type: 'subscribe', id: 'w', threadId: bobs.threadId, afterSeq: 1 });
    expect(await watcher.socket.next()).toMatchObject({ type: 'subscribed', id: 'w' });
    let peak = 0;
    for (let i = 0; i < 20; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      peak = Math.max(peak, retained() - baseline);
      expect(await healthzMs(server.url)).toBeLessThan(1_000);
      await bob.append(bobs.threadId, [{ type: 'test.note', data: { i } }]);
      expect(await watcher.socket.next()).toMatchObject({ type: 'event', id: 'w' });
    }
    // 40 subscriptions x 30 MB of backlog is 1.2 GB if each holds its page (1.8 GB peak measured before); one 100-event page per socket is ~6 MB.
    console.log(
      `backlog attack: retained heap + external, peak ${(peak / 1024 / 1024).toFixed(1)} MiB over the baseline`,
    );
    expect(peak / 1024 / 1024).toBeLessThan(200);
    watcher.socket.close();
    socket.close();
  }, 60_000);
});
