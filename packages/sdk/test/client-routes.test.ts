import { startTestServer, type TestServer } from '@bubble/server/testing';
import { SUBTHREAD_ID_PATTERN } from '@bubble/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubbleApiError, BubbleClient } from '../src/index.js';

let server: TestServer;
let alice: BubbleClient;
let bob: BubbleClient;

async function expectApiError(promise: Promise<unknown>, code: string, status: number): Promise<BubbleApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(BubbleApiError);
  const apiError = error as BubbleApiError;
  expect({ code: apiError.code, status: apiError.status }).toEqual({ code, status });
  return apiError;
}

beforeAll(async () => {
  server = await startTestServer();
  const a = await server.createHuman('alice', 'Alice');
  const b = await server.createHuman('bob', 'Bob');
  alice = new BubbleClient({ url: server.url, token: a.token.token });
  bob = new BubbleClient({ url: server.url, token: b.token.token });
});

afterAll(async () => {
  alice?.close();
  bob?.close();
  await server?.stop();
});

describe('BubbleClient against the real server', () => {
  it('reads discovery and health without a token', async () => {
    const anonymous = new BubbleClient({ url: server.url });
    const info = await anonymous.info();
    expect(info.name).toBe('bubble');
    expect(info.protocol).toBe(1);
    expect(info.extensions.artifacts?.version).toBe(1);
    expect(await anonymous.healthz()).toEqual({ ok: true });
  });

  it('answers whoami for the caller', async () => {
    const me = await alice.whoami();
    expect(me).toMatchObject({ principalId: 'alice', kind: 'human', displayName: 'Alice' });
  });

  it('creates a bot, whose token works once minted, and manages its tokens', async () => {
    const { principal, token } = await alice.createBot({ principalId: 'bot-routes', displayName: 'Routes bot' });
    expect(principal).toMatchObject({ principalId: 'bot-routes', kind: 'bot', ownerPrincipalIds: ['alice'] });
    expect(token.token.startsWith('bubble_agent_')).toBe(true);
    const bot = new BubbleClient({ url: server.url, token: token.token });
    expect((await bot.whoami()).principalId).toBe('bot-routes');

    await expectApiError(alice.createBot({ principalId: 'bot-routes' }), 'conflict', 409);

    const second = await alice.mintToken('bot-routes');
    expect(second.token.startsWith('bubble_agent_')).toBe(true);
    const listed = await alice.listTokens('bot-routes');
    expect(listed.map((t) => t.tokenId).sort()).toEqual([token.tokenId, second.tokenId].sort());
    expect(listed.every((t) => !('token' in t))).toBe(true);

    await alice.revokeToken('bot-routes', token.tokenId);
    await expectApiError(bot.whoami(), 'unauthorized', 401);
    const secondBot = new BubbleClient({ url: server.url, token: second.token });
    expect((await secondBot.whoami()).principalId).toBe('bot-routes');
    await alice.revokeAllTokens('bot-routes');
    await expectApiError(secondBot.whoami(), 'unauthorized', 401);

    // Only an owner manages tokens; bob cannot even see the bot.
    await expectApiError(bob.mintToken('bot-routes'), 'not_found', 404);
  });

  it('searches and reads visible principals; others are not found', async () => {
    const found = await alice.searchPrincipals({ query: 'ali' });
    expect(found.map((p) => p.principalId)).toContain('alice');
    expect((await alice.getPrincipal('alice')).displayName).toBe('Alice');
    // bob shares no thread with alice yet: invisible, exactly like an unknown id.
    await expectApiError(alice.getPrincipal('bob'), 'not_found', 404);
    await expectApiError(alice.getPrincipal('nobody-here'), 'not_found', 404);
  });

  it('creates threads and subthreads, idempotently with a key', async () => {
    const first = await alice.createThread({ title: 'Q3 research' });
    expect(first.created).toBe(true);
    expect(first.thread).toMatchObject({ title: 'Q3 research', parentThreadId: null, createdBy: 'alice', headSeq: 1 });

    const keyed = await alice.createThread({ title: 'keyed', key: 'k-1' });
    const again = await alice.createThread({ title: 'keyed', key: 'k-1' });
    expect(keyed.created).toBe(true);
    expect(again.created).toBe(false);
    expect(again.thread.threadId).toBe(keyed.thread.threadId);

    const child = await alice.createSubthread(first.thread.threadId, { title: 'child', key: 'sub-1' });
    expect(child.thread.parentThreadId).toBe(first.thread.threadId);
    expect(child.thread.threadId.startsWith(`${first.thread.threadId}.sub-`)).toBe(true);
    expect(SUBTHREAD_ID_PATTERN.test(child.thread.threadId)).toBe(true);
    const childAgain = await alice.createSubthread(first.thread.threadId, { title: 'child', key: 'sub-1' });
    expect(childAgain).toEqual({ thread: child.thread, created: false });

    const mine = (await alice.listThreads()).map((t) => t.threadId);
    expect(mine).toEqual(expect.arrayContaining([first.thread.threadId, keyed.thread.threadId, child.thread.threadId]));
    expect((await alice.getThread(first.thread.threadId)).title).toBe('Q3 research');
    // No grant: forbidden (protocol.md, "Errors").
    await expectApiError(bob.getThread(first.thread.threadId), 'forbidden', 403);
  });

  it('adds, lists and removes participants; lists the caller grants', async () => {
    const { thread } = await alice.createThread({ title: 'team' });
    // alice cannot see bob yet (Consent): he is invited, and joins by accepting.
    const invited = await alice.addParticipant(thread.threadId, 'bob');
    expect(invited).toEqual({
      status: 'pending',
      created: false,
      invitation: { threadId: thread.threadId, principalId: 'bob', status: 'pending' },
    });
    expect(await alice.addParticipant(thread.threadId, 'nobody-at-all')).toEqual({
      status: 'pending',
      created: false,
      invitation: { threadId: thread.threadId, principalId: 'nobody-at-all', status: 'pending' },
    });
    expect(await bob.listInvitations()).toEqual([
      { threadId: thread.threadId, title: 'team', invitedBy: 'alice', role: 'member', createdAt: expect.any(String) },
    ]);
    const accepted = await bob.acceptInvitation(thread.threadId);
    expect(accepted).toMatchObject({
      threadId: thread.threadId,
      principalId: 'bob',
      role: 'member',
      grantedBy: 'alice',
      revokedAt: null,
    });
    expect(accepted.joinedSeq).toBe(2);
    await expectApiError(bob.acceptInvitation(thread.threadId), 'not_found', 404);
    const repeated = await alice.addParticipant(thread.threadId, 'bob');
    if (repeated.status !== 'granted') throw new Error('bob is visible now: the add is a grant');
    expect(repeated.created).toBe(false);
    expect(repeated.grant.joinedSeq).toBe(2);
    const other = await alice.createThread({ title: 'other' });
    const direct = await alice.addParticipant(other.thread.threadId, 'bob');
    expect(direct).toMatchObject({
      status: 'granted',
      created: true,
      grant: { principalId: 'bob', grantedBy: 'alice' },
    });

    const participants = await bob.listParticipants(thread.threadId);
    expect(participants.map((g) => `${g.principalId}:${g.role}`).sort()).toEqual(['alice:owner', 'bob:member']);
    expect((await bob.listGrants()).map((g) => g.threadId)).toContain(thread.threadId);
    // bob is now visible to alice.
    expect((await alice.getPrincipal('bob')).principalId).toBe('bob');

    await expectApiError(bob.addParticipant(thread.threadId, 'alice', 'owner'), 'forbidden', 403);
    await alice.removeParticipant(thread.threadId, 'bob');
    expect((await alice.listParticipants(thread.threadId)).map((g) => g.principalId)).toEqual(['alice']);
    expect((await bob.listGrants()).map((g) => g.threadId)).not.toContain(thread.threadId);
  });

  it('declines an invitation: it is gone, and nothing is left to accept', async () => {
    const dave = new BubbleClient({ url: server.url, token: (await server.createHuman('dave')).token.token });
    const { thread } = await alice.createThread({ title: 'declined' });
    expect((await alice.addParticipant(thread.threadId, 'dave')).status).toBe('pending');
    expect((await dave.listInvitations()).map((i) => i.threadId)).toEqual([thread.threadId]);
    await dave.declineInvitation(thread.threadId);
    expect(await dave.listInvitations()).toEqual([]);
    await expectApiError(dave.acceptInvitation(thread.threadId), 'not_found', 404);
    await expectApiError(dave.declineInvitation(thread.threadId), 'not_found', 404);
  });

  it('appends events with client event ids, replays safely, reads after and before', async () => {
    const { thread } = await alice.createThread({ title: 'log' });
    const appended = await alice.appendEvents(thread.threadId, [
      { type: 'run_started', data: { runId: 'r1' } },
      { type: 'message_part', data: { runId: 'r1', chunk: { type: 'text-delta', id: 't', delta: 'hi' } } },
      { type: 'acme.note', data: { n: 1 }, clientEventId: 'mine-1' },
    ]);
    expect(appended.replayed).toBe(false);
    expect(appended.events.map((e) => e.seq)).toEqual([2, 3, 4]);
    expect(appended.events.every((e) => e.principalId === 'alice')).toBe(true);
    expect(appended.events[0]?.clientEventId).toMatch(/^ce_[0-9a-f-]{36}$/);
    expect(appended.events[2]?.clientEventId).toBe('mine-1');

    const replay = await alice.appendEvent(thread.threadId, {
      type: 'acme.note',
      data: { n: 1 },
      clientEventId: 'mine-1',
    });
    expect(replay.seq).toBe(4);
    const replayAll = await alice.appendEvents(thread.threadId, [
      { type: 'acme.note', data: { n: 1 }, clientEventId: 'mine-1' },
    ]);
    expect(replayAll.replayed).toBe(true);
    await expectApiError(
      alice.appendEvent(thread.threadId, { type: 'acme.note', data: { n: 2 }, clientEventId: 'mine-1' }),
      'conflict',
      409,
    );
    await expectApiError(alice.appendEvent(thread.threadId, { type: 'no_dot_type', data: {} }), 'invalid_request', 400);

    const after = await alice.readEvents(thread.threadId, { after: 1 });
    expect(after.headSeq).toBe(4);
    expect(after.events.map((e) => e.seq)).toEqual([2, 3, 4]);
    const before = await alice.readEvents(thread.threadId, { before: 4, limit: 2 });
    expect(before.events.map((e) => e.seq)).toEqual([2, 3]);
    await expectApiError(alice.readEvents(thread.threadId, { after: 1, before: 3 }), 'invalid_request', 400);
  });

  it('stores a forward-only consumer cursor', async () => {
    const { thread } = await alice.createThread({});
    await alice.putCursor(thread.threadId, 1);
    expect(await alice.getCursor(thread.threadId)).toBe(1);
    await alice.appendEvent(thread.threadId, { type: 'acme.x', data: {} });
    await alice.putCursor(thread.threadId, 2);
    await alice.putCursor(thread.threadId, 1);
    expect(await alice.getCursor(thread.threadId)).toBe(2);
  });

  it('writes, lists and reads artifacts, with baseVersion conflicts', async () => {
    const { thread } = await alice.createThread({ title: 'docs' });
    const v1 = await alice.putArtifact(thread.threadId, 'plan.md', { content: '# plan', mediaType: 'text/markdown' });
    expect(v1).toMatchObject({ name: 'plan.md', version: 1, mediaType: 'text/markdown', updatedBy: 'alice', size: 6 });
    const v2 = await alice.putArtifact(thread.threadId, 'plan.md', {
      content: '# plan v2',
      mediaType: 'text/markdown',
      baseVersion: 1,
    });
    expect(v2.version).toBe(2);
    await expectApiError(
      alice.putArtifact(thread.threadId, 'plan.md', { content: 'stale', mediaType: 'text/markdown', baseVersion: 1 }),
      'conflict',
      409,
    );
    const list = await alice.listArtifacts(thread.threadId);
    expect(list).toEqual([
      expect.objectContaining({ name: 'plan.md', version: 2, size: Buffer.byteLength('# plan v2') }),
    ]);
    expect((await alice.getArtifact(thread.threadId, 'plan.md')).content).toBe('# plan v2');
    expect((await alice.getArtifact(thread.threadId, 'plan.md', { version: 1 })).content).toBe('# plan');
    const log = await alice.readEvents(thread.threadId, { after: 1 });
    expect(log.events.map((e) => [e.type, e.principalId, e.data.version])).toEqual([
      ['artifact_updated', 'system', 1],
      ['artifact_updated', 'system', 2],
    ]);
  });

  it('rebuilds typed errors from the wire: unauthorized, not found, invalid request', async () => {
    const stranger = new BubbleClient({ url: server.url, token: 'bubble_user_not-a-real-token' });
    const unauthorized = await expectApiError(stranger.whoami(), 'unauthorized', 401);
    expect(unauthorized.retryable).toBe(false);
    expect(unauthorized.isAuthError).toBe(true);
    expect(unauthorized.message.length).toBeGreaterThan(0);

    await expectApiError(alice.getThread('th_does_not_exist'), 'not_found', 404);
    const invalid = await expectApiError(alice.createBot({ principalId: 'Not Valid!' }), 'invalid_request', 400);
    expect(invalid.retryable).toBe(false);
  });
});
