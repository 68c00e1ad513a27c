import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BubbleClient } from '../src/index.js';
import { seqs, take, waitUntil } from './support/live-helpers.js';

/**
 * Presence through the sdk against the real server: `presence` frames reach `onPresence` of the
 * thread subscription, never its events and never as an error; `listParticipants` keeps `online`.
 */
let server: TestServer;
let alice: BubbleClient;
let botToken: string;
const clients: BubbleClient[] = [];

function client(token: string): BubbleClient {
  const made = new BubbleClient({ url: server.url, token, live: { reconnectBaseMs: 20, reconnectCapMs: 200 } });
  clients.push(made);
  return made;
}

beforeAll(async () => {
  server = await startTestServer();
  alice = new BubbleClient({ url: server.url, token: (await server.createHuman('alice')).token.token });
  botToken = (await alice.createBot({ principalId: 'bot-research' })).token.token;
});

afterEach(() => {
  for (const made of clients.splice(0)) made.close();
});

afterAll(async () => {
  alice?.close();
  await server?.stop();
});

describe('presence on a thread subscription', () => {
  it("hands a participant's coming online and going offline to onPresence, beside the events", async () => {
    const { thread } = await alice.createThread({ title: 'presence' });
    await alice.addParticipant(thread.threadId, 'bot-research');
    const told: Array<[string, boolean]> = [];
    const reader = client((await server.createHuman('reader')).token.token);
    // alice cannot see the reader yet: it accepts her invitation (Consent).
    await alice.addParticipant(thread.threadId, 'reader');
    await reader.acceptInvitation(thread.threadId);
    const subscription = reader.subscribeThread(thread.threadId, {
      onPresence: (principalId, online) => told.push([principalId, online]),
    });
    // The backlog: alice's grant, the bot's, the reader's.
    expect(seqs(await take(subscription, 3))).toEqual([1, 2, 3]);
    expect((await reader.listParticipants(thread.threadId)).map((g) => [g.principalId, g.online])).toEqual([
      ['alice', false],
      ['bot-research', false],
      ['reader', true],
    ]);

    // The bot opens its live connection (its grants stream is enough to hold a socket).
    const bot = client(botToken);
    const grants = bot.subscribeGrantsAsIterable();
    await grants.whenSynced();
    await waitUntil(() => told.length === 1, 'the bot online');
    expect(told).toEqual([['bot-research', true]]);
    expect((await reader.listParticipants(thread.threadId)).find((g) => g.principalId === 'bot-research')?.online).toBe(
      true,
    );

    // Events still flow, and presence never entered the stream.
    await alice.appendEvents(thread.threadId, [{ type: 'test.note', data: { n: 1 } }]);
    expect(seqs(await take(subscription, 1))).toEqual([4]);

    bot.close();
    await waitUntil(() => told.length === 2, 'the bot offline', 5_000);
    expect(told).toEqual([
      ['bot-research', true],
      ['bot-research', false],
    ]);
    expect(subscription.isOver).toBe(false);
    subscription.unsubscribe();
  });

  it('is harmless without onPresence, and a listener that throws does not end the subscription', async () => {
    const { thread } = await alice.createThread({ title: 'quiet' });
    await alice.addParticipant(thread.threadId, 'bot-research');
    const reader = client((await server.createHuman('reader2')).token.token);
    await alice.addParticipant(thread.threadId, 'reader2');
    await reader.acceptInvitation(thread.threadId);
    const plain = reader.subscribeThread(thread.threadId);
    let calls = 0;
    const throwing = reader.subscribeThread(thread.threadId, {
      onPresence: () => {
        calls += 1;
        throw new Error('a listener bug');
      },
    });
    expect(seqs(await take(plain, 3))).toEqual([1, 2, 3]);
    expect(seqs(await take(throwing, 3))).toEqual([1, 2, 3]);
    const bot = client(botToken);
    await bot.subscribeGrantsAsIterable().whenSynced();
    await waitUntil(() => calls === 1, 'the throwing listener called');
    await alice.appendEvents(thread.threadId, [{ type: 'test.note', data: {} }]);
    expect(seqs(await take(plain, 1))).toEqual([4]);
    expect(seqs(await take(throwing, 1))).toEqual([4]);
  });
});
