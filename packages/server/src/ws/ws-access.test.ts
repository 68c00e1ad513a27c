import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Grant } from '@bubble/protocol';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { TestApi } from './ws-test-api.js';
import { TestSocket } from './ws-test-client.js';

let server: TestServer;
let alice: TestApi;
let bob: TestApi;

beforeEach(async () => {
  server = await startTestServer();
  alice = new TestApi(server.url, (await server.createHuman('alice')).token.token);
  bob = new TestApi(server.url, (await server.createHuman('bob')).token.token);
});

afterEach(async () => {
  await server.stop();
});

describe('grants stream', () => {
  it('sends the live grants, grants_synced, then live added and revoked changes', async () => {
    const own = await bob.createThread({ title: "bob's" });
    const shared = await alice.createThread({ title: 'shared' });
    const sharedGrant = await alice.addPerson(shared.threadId, 'bob', bob);
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    socket.send({ type: 'subscribe_grants', id: 'g' });
    const snapshot = await socket.until((frame) => frame.type === 'grants_synced');
    expect(snapshot.at(-1)).toEqual({ type: 'grants_synced', id: 'g' });
    const added = snapshot.slice(0, -1);
    expect(added.every((frame) => frame.type === 'grant' && frame.id === 'g' && frame.change === 'added')).toBe(true);
    expect(added.map((frame) => (frame.grant as Grant).threadId).sort()).toEqual(
      [own.threadId, shared.threadId].sort(),
    );
    expect(added.find((frame) => (frame.grant as Grant).threadId === shared.threadId)?.grant).toEqual(sharedGrant);

    const later = await alice.createThread({ title: 'later' });
    const laterGrant = await alice.addPerson(later.threadId, 'bob', bob);
    expect(await socket.next()).toEqual({ type: 'grant', id: 'g', change: 'added', grant: laterGrant });
    await alice.removeParticipant(later.threadId, 'bob');
    expect(await socket.next()).toMatchObject({
      type: 'grant',
      id: 'g',
      change: 'revoked',
      grant: { threadId: later.threadId, principalId: 'bob', grantedAt: laterGrant.grantedAt },
    });
    // Alice's own changes are not bob's business.
    await alice.createThread({ title: 'not for bob' });
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('sends grants_synced alone when the caller has no grants', async () => {
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    socket.send({ type: 'subscribe_grants', id: 'g' });
    expect(await socket.next()).toEqual({ type: 'grants_synced', id: 'g' });
    socket.close();
  });

  it('sends each grant once while grants are added during the snapshot', async () => {
    const threads = await Promise.all(Array.from({ length: 20 }, () => alice.createThread()));
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    const adding = (async () => {
      for (const thread of threads) await alice.addPerson(thread.threadId, 'bob', bob);
    })();
    await new Promise((resolve) => setTimeout(resolve, 5));
    socket.send({ type: 'subscribe_grants', id: 'g' });
    await adding;
    const frames = await socket.roundTrip();
    const grants = frames.filter((frame) => frame.type === 'grant').map((frame) => (frame.grant as Grant).threadId);
    expect(grants.sort()).toEqual(threads.map((thread) => thread.threadId).sort());
    expect(frames.filter((frame) => frame.type === 'grants_synced')).toHaveLength(1);
    socket.close();
  });
});

describe('losing access', () => {
  it('ends a thread subscription with grant_revoked when the grant is revoked', async () => {
    const thread = await alice.createThread();
    await alice.addPerson(thread.threadId, 'bob', bob);
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    socket.send({ type: 'subscribe', id: 's', threadId: thread.threadId, afterSeq: 2 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 's' });
    await alice.removeParticipant(thread.threadId, 'bob');
    const ended = await socket.next((frame) => frame.type === 'subscription_ended');
    expect(ended).toEqual({ type: 'subscription_ended', id: 's', reason: 'grant_revoked' });
    await alice.note(thread.threadId, 'after revoke');
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('ends a subthread subscription held through the parent grant when that grant is revoked', async () => {
    const parent = await alice.createThread({ title: 'parent' });
    const child = await alice.createThread({ title: 'child', parentThreadId: parent.threadId });
    await alice.addPerson(parent.threadId, 'bob', bob);
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    socket.send({ type: 'subscribe', id: 'child', threadId: child.threadId, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 'child' });
    const event = await alice.note(child.threadId, 'visible through the parent');
    expect(
      await socket.next((frame) => frame.type === 'event' && (frame.event as { seq: number }).seq === event.seq),
    ).toEqual({
      type: 'event',
      id: 'child',
      event,
    });
    await alice.removeParticipant(parent.threadId, 'bob');
    expect(await socket.next((frame) => frame.type === 'subscription_ended')).toEqual({
      type: 'subscription_ended',
      id: 'child',
      reason: 'grant_revoked',
    });
    await alice.note(child.threadId, 'hidden now');
    expect(await socket.roundTrip()).toEqual([]);
    socket.close();
  });

  it('keeps a subscription that is still readable through another grant', async () => {
    const parent = await alice.createThread();
    const child = await alice.createThread({ parentThreadId: parent.threadId });
    await alice.addPerson(parent.threadId, 'bob', bob);
    await alice.addPerson(child.threadId, 'bob', bob);
    const { socket } = await TestSocket.authenticated(server.wsUrl, bob.token);
    socket.send({ type: 'subscribe', id: 'child', threadId: child.threadId, afterSeq: 2 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 'child' });
    await alice.removeParticipant(parent.threadId, 'bob');
    const event = await alice.note(child.threadId, 'still visible');
    const frames = await socket.until(
      (frame) => frame.type === 'event' && (frame.event as { seq: number }).seq === event.seq,
    );
    expect(frames.filter((frame) => frame.type === 'subscription_ended')).toEqual([]);
    expect(frames.at(-1)).toEqual({ type: 'event', id: 'child', event });
    socket.close();
  });
});

describe('token revocation', () => {
  it('closes the sockets of a revoked token with 4003 and leaves the others open', async () => {
    const { token: first } = await alice.createBot('bot-one');
    const second = await alice.mintToken('bot-one');
    const a = await TestSocket.authenticated(server.wsUrl, first.token);
    const b = await TestSocket.authenticated(server.wsUrl, second.token);
    await alice.revokeToken('bot-one', first.tokenId);
    expect((await a.socket.closed).code).toBe(4003);
    expect(await b.socket.roundTrip()).toEqual([]);
    // The revoked token no longer authenticates.
    const again = await TestSocket.open(server.wsUrl);
    again.send({ type: 'client.auth', token: first.token });
    expect((await again.closed).code).toBe(4001);
    b.socket.close();
  });

  it('closes every socket of the principal with 4003 when all its tokens are revoked', async () => {
    const { token: first } = await alice.createBot('bot-two');
    const second = await alice.mintToken('bot-two');
    const sockets = await Promise.all(
      [first.token, first.token, second.token].map((t) => TestSocket.authenticated(server.wsUrl, t)),
    );
    const bystander = await TestSocket.authenticated(server.wsUrl, alice.token);
    await alice.revokeAllTokens('bot-two');
    for (const { socket } of sockets) expect((await socket.closed).code).toBe(4003);
    expect(await bystander.socket.roundTrip()).toEqual([]);
    bystander.socket.close();
  });
});
