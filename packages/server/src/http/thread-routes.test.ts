import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SUBTHREAD_ID_PATTERN } from '@bubble/protocol';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { TestSocket } from '../ws/ws-test-client.js';

let w: TestWorld;
beforeEach(async () => {
  w = await startTestWorld(['alice', 'bob', 'carol', 'dave']);
});
afterEach(async () => {
  await w.stop();
});

const code = (res: { body: any }) => res.body?.error?.code;

describe('threads', () => {
  it('creates a thread with the caller as its only owner, first event participant_added by system', async () => {
    const res = await w.as.alice!.post('/v1/threads', { title: 'Q3 research' });
    expect(res.status).toBe(201);
    const thread = res.body.thread;
    expect(thread).toEqual({
      threadId: expect.stringMatching(/^th_[a-z0-9]{12}$/),
      parentThreadId: null,
      title: 'Q3 research',
      createdBy: 'alice',
      createdAt: expect.any(String),
      headSeq: 1,
    });
    const grants = await w.as.alice!.get(`/v1/threads/${thread.threadId}/participants`);
    expect(grants.body.grants).toEqual([
      {
        threadId: thread.threadId,
        principalId: 'alice',
        role: 'owner',
        grantedBy: 'alice',
        grantedAt: expect.any(String),
        joinedSeq: 1,
        revokedAt: null,
        // protocol.md: each grant carries `online`; alice holds no WebSocket.
        online: false,
      },
    ]);
    const events = await w.as.alice!.get(`/v1/threads/${thread.threadId}/events`);
    expect(events.body.events).toEqual([
      expect.objectContaining({
        seq: 1,
        type: 'participant_added',
        principalId: 'system',
        data: { principalId: 'alice', role: 'owner', by: 'alice' },
      }),
    ]);
    expect((await w.as.alice!.get(`/v1/threads/${thread.threadId}`)).body).toEqual({ thread });
    expect((await w.as.alice!.post('/v1/threads', {})).body.thread.title).toBeNull();
    const noBody = await w.as.alice!.call('POST', '/v1/threads');
    expect(noBody.status).toBe(201);
    expect(noBody.body.thread.createdBy).toBe('alice');
  });

  it('creates nothing new on a retry with the same key (200, same thread)', async () => {
    const first = await w.as.alice!.post('/v1/threads', { title: 'a', key: 'k-1' });
    const again = await w.as.alice!.post('/v1/threads', { title: 'a', key: 'k-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const bobs = await w.as.bob!.post('/v1/threads', { title: 'a', key: 'k-1' });
    expect(bobs.status).toBe(201);
    expect(bobs.body.thread.threadId).not.toBe(first.body.thread.threadId);
    expect((await w.as.alice!.get('/v1/threads')).body.threads).toHaveLength(1);
  });

  it('creates subthreads for participants of the parent, with the spec id shape and key idempotency', async () => {
    const parent = await w.thread('alice');
    const sub = await w.as.alice!.post('/v1/threads', { parentThreadId: parent, key: 'tool-1' });
    expect(sub.status).toBe(201);
    const subId = sub.body.thread.threadId as string;
    expect(subId).toMatch(new RegExp(`^${parent}\\.sub-[a-z0-9]{5}-[a-z0-9]{3}$`));
    expect(SUBTHREAD_ID_PATTERN.exec(subId)?.[1]).toBe(parent);
    expect(sub.body.thread.parentThreadId).toBe(parent);
    expect(
      (await w.as.alice!.post('/v1/threads', { parentThreadId: parent, key: 'tool-1' })).body.thread.threadId,
    ).toBe(subId);
    const nested = await w.as.alice!.post('/v1/threads', { parentThreadId: subId });
    expect(nested.body.thread.threadId).toMatch(
      new RegExp(`^${subId.replace(/\./g, '\\.')}\\.sub-[a-z0-9]{5}-[a-z0-9]{3}$`),
    );

    expect(code(await w.as.bob!.post('/v1/threads', { parentThreadId: parent }))).toBe('forbidden');
    expect(code(await w.as.bob!.post('/v1/threads', { parentThreadId: 'th_unknown' }))).toBe('not_found');
  });

  it('nests subthreads at most 8 levels deep, with a clear 400, and every id made is usable on every route and frame', async () => {
    let parent = await w.thread('alice');
    for (let depth = 1; depth <= 8; depth += 1) {
      const res = await w.as.alice!.post('/v1/threads', { parentThreadId: parent });
      expect(res.status).toBe(201);
      parent = res.body.thread.threadId;
    }
    expect(parent.split('.sub-')).toHaveLength(9);
    const deeper = await w.as.alice!.post('/v1/threads', { parentThreadId: parent });
    expect(deeper.status).toBe(400);
    expect(deeper.body.error.message).toBe(`subthreads nest at most 8 levels deep; ${parent} is at the limit`);
    // The deepest id works for reads, appends and a WebSocket subscription.
    expect((await w.as.alice!.post(`/v1/threads/${parent}/events`, { type: 'acme.x', data: {} })).status).toBe(201);
    expect((await w.as.alice!.get(`/v1/threads/${parent}/events?after=0`)).body.events).toHaveLength(2);
    const { socket } = await TestSocket.authenticated(w.server.wsUrl, w.tokens.alice!);
    socket.send({ type: 'subscribe', id: 'deep', threadId: parent, afterSeq: 0 });
    expect(await socket.next()).toMatchObject({ type: 'subscribed', id: 'deep', headSeq: 2 });
    socket.close();
  });

  it('lets readers of a parent read its subthreads but not write them; GET /v1/threads lists own grants only', async () => {
    const parent = await w.thread('alice');
    const sub = (await w.as.alice!.post('/v1/threads', { parentThreadId: parent })).body.thread.threadId as string;
    await w.grant('alice', parent, 'bob');
    const bob = w.as.bob!;
    expect((await bob.get(`/v1/threads/${sub}`)).status).toBe(200);
    expect((await bob.get(`/v1/threads/${sub}/events`)).status).toBe(200);
    expect((await bob.get(`/v1/threads/${sub}/participants`)).body.grants.map((g: any) => g.principalId)).toEqual([
      'alice',
    ]);
    expect(code(await bob.post(`/v1/threads/${sub}/events`, { type: 'acme.note', data: {} }))).toBe('forbidden');
    expect(code(await bob.post(`/v1/threads/${sub}/participants`, { principalId: 'carol', role: 'member' }))).toBe(
      'forbidden',
    );
    expect(code(await bob.post('/v1/threads', { parentThreadId: sub }))).toBe('forbidden');
    expect((await bob.get('/v1/threads')).body.threads.map((t: any) => t.threadId)).toEqual([parent]);
    expect((await w.as.alice!.get('/v1/threads')).body.threads.map((t: any) => t.threadId)).toEqual([parent, sub]);
    // a stranger: 403 on a thread that exists, 404 on one that does not
    expect(code(await w.as.carol!.get(`/v1/threads/${sub}`))).toBe('forbidden');
    expect(code(await w.as.carol!.get(`/v1/threads/${parent}/events`))).toBe('forbidden');
    expect(code(await w.as.carol!.get('/v1/threads/th_nothere'))).toBe('not_found');
  });
});

describe('grants', () => {
  it('adds participants with joinedSeq = the participant_added seq, and lists the caller grants', async () => {
    const t = await w.thread('alice');
    await w.as.alice!.post(`/v1/threads/${t}/events`, { type: 'acme.note', data: {} });
    // Alice cannot see bob yet: he is invited, and the grant is made when he accepts, by alice.
    const invited = await w.as.alice!.post(`/v1/threads/${t}/participants`, { principalId: 'bob', role: 'member' });
    expect(invited.status).toBe(202);
    const res = await w.as.bob!.post(`/v1/invitations/${t}/accept`);
    expect(res.status).toBe(200);
    expect(res.body.grant).toEqual({
      threadId: t,
      principalId: 'bob',
      role: 'member',
      grantedBy: 'alice',
      grantedAt: expect.any(String),
      joinedSeq: 3,
      revokedAt: null,
    });
    const ev = await w.as.bob!.get(`/v1/threads/${t}/events?after=2`);
    expect(ev.body.events).toEqual([
      expect.objectContaining({
        seq: 3,
        type: 'participant_added',
        principalId: 'system',
        data: { principalId: 'bob', role: 'member', by: 'alice' },
      }),
    ]);
    expect((await w.as.bob!.get('/v1/grants')).body.grants).toEqual([res.body.grant]);
    // Now that they share a thread, alice adds bob to another one at once.
    const t2 = await w.thread('alice');
    const direct = await w.as.alice!.post(`/v1/threads/${t2}/participants`, { principalId: 'bob', role: 'member' });
    expect(direct.status).toBe(201);
    expect(direct.body.grant).toMatchObject({ threadId: t2, principalId: 'bob', grantedBy: 'alice', joinedSeq: 2 });
  });

  it('follows the grant matrix: who may add, with which role, and role changes', async () => {
    const t = await w.thread('alice');
    await w.grant('alice', t, 'bob', 'member');
    const bob = w.as.bob!;
    // bob and carol share a thread of bob's, so bob sees carol
    await w.grant('bob', await w.thread('bob'), 'carol');
    // a member may add members but not owners
    expect((await bob.post(`/v1/threads/${t}/participants`, { principalId: 'carol', role: 'member' })).status).toBe(
      201,
    );
    expect(code(await bob.post(`/v1/threads/${t}/participants`, { principalId: 'dave', role: 'owner' }))).toBe(
      'forbidden',
    );
    // an existing live grant is answered 200 unchanged, unless an owner changes its role
    const same = await bob.post(`/v1/threads/${t}/participants`, { principalId: 'carol', role: 'member' });
    expect(same.status).toBe(200);
    expect(same.body.grant.role).toBe('member');
    const promoted = await w.as.alice!.post(`/v1/threads/${t}/participants`, {
      principalId: 'carol',
      role: 'owner',
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body.grant).toMatchObject({ role: 'owner', joinedSeq: 3 });
    const demoteAttempt = await bob.post(`/v1/threads/${t}/participants`, { principalId: 'alice', role: 'member' });
    expect(demoteAttempt.status).toBe(200);
    expect(demoteAttempt.body.grant.role).toBe('owner');
    // a stranger may not add anyone; unknown principals are answered as pending invitations
    // (Consent), unknown threads 404; bad bodies 400
    expect(code(await w.as.dave!.post(`/v1/threads/${t}/participants`, { principalId: 'dave', role: 'member' }))).toBe(
      'forbidden',
    );
    for (const principalId of ['nobody', 'system']) {
      const res = await w.as.alice!.post(`/v1/threads/${t}/participants`, { principalId, role: 'member' });
      expect(res.status).toBe(202);
      expect(res.text).toBe(JSON.stringify({ invitation: { threadId: t, principalId, status: 'pending' } }));
    }
    expect(
      code(await w.as.alice!.post('/v1/threads/th_nothere/participants', { principalId: 'bob', role: 'member' })),
    ).toBe('not_found');
    expect(code(await w.as.alice!.post(`/v1/threads/${t}/participants`, { principalId: 'bob', role: 'admin' }))).toBe(
      'invalid_request',
    );
  });

  it('lets a bot add only principals it can see; a person it cannot see is invited', async () => {
    const bot = await w.bot('alice', 'bot-a');
    const t = await w.thread('alice');
    await w.grant('alice', t, 'bot-a');
    const invited = await bot.post(`/v1/threads/${t}/participants`, { principalId: 'dave', role: 'member' });
    expect(invited.status).toBe(202);
    expect(invited.body).toEqual({ invitation: { threadId: t, principalId: 'dave', status: 'pending' } });
    expect((await w.as.dave!.get('/v1/invitations')).body.invitations).toEqual([
      { threadId: t, title: null, invitedBy: 'bot-a', role: 'member', createdAt: expect.any(String) },
    ]);
    expect((await bot.get('/v1/principals/dave')).status).toBe(404);
    const own = await bot.post('/v1/threads', {});
    expect(
      (await bot.post(`/v1/threads/${own.body.thread.threadId}/participants`, { principalId: 'alice', role: 'member' }))
        .status,
    ).toBe(201);
  });

  it('puts a bot on a thread only by one of its owners unless its joinableBy is anyone', async () => {
    await w.bot('alice', 'alice-bot');
    // Mallory (dave) cannot see alice-bot: adding it to her own thread answers as an unknown id
    // does (202, pending), and puts nothing on the thread.
    const mallorys = await w.thread('dave');
    expect((await w.as.dave!.get('/v1/principals/alice-bot')).status).toBe(404);
    const hidden = await w.as.dave!.post(`/v1/threads/${mallorys}/participants`, {
      principalId: 'alice-bot',
      role: 'member',
    });
    expect(hidden.status).toBe(202);
    expect(hidden.text).toBe(
      JSON.stringify({ invitation: { threadId: mallorys, principalId: 'alice-bot', status: 'pending' } }),
    );
    expect(
      (await w.as.dave!.get(`/v1/threads/${mallorys}/participants`)).body.grants.map(
        (g: { principalId: string }) => g.principalId,
      ),
    ).toEqual(['dave']);
    // Bob shares a thread with the bot, so he sees it; he is still not its owner: 403.
    const shared = await w.thread('alice');
    await w.grant('alice', shared, 'bob');
    await w.grant('alice', shared, 'alice-bot');
    const bobs = await w.thread('bob');
    const visible = await w.as.bob!.post(`/v1/threads/${bobs}/participants`, {
      principalId: 'alice-bot',
      role: 'member',
    });
    expect(visible.status).toBe(403);
    expect(visible.body.error).toMatchObject({
      code: 'forbidden',
      message: 'only an owner of alice-bot may add it to a thread',
    });
    // ... nor on the shared thread as owner role, nor as a re-add of a live grant.
    expect(
      code(await w.as.bob!.post(`/v1/threads/${shared}/participants`, { principalId: 'alice-bot', role: 'member' })),
    ).toBe('forbidden');
    // Nothing was appended to Bob's thread by the refusals.
    expect(
      (await w.as.bob!.get(`/v1/threads/${bobs}/participants`)).body.grants.map(
        (g: { principalId: string }) => g.principalId,
      ),
    ).toEqual(['bob']);
    // Another bot may not add it either (bots own no bots).
    const other = await w.bot('bob', 'bob-bot');
    await w.grant('bob', bobs, 'bob-bot');
    expect(
      (await other.post(`/v1/threads/${bobs}/participants`, { principalId: 'alice-bot', role: 'member' })).status,
    ).toBe(202);
    expect(
      (await w.as.bob!.get(`/v1/threads/${bobs}/participants`)).body.grants.map(
        (g: { principalId: string }) => g.principalId,
      ),
    ).toEqual(['bob', 'bob-bot']);

    // Its owner opens it up: now any participant may add it.
    const opened = await w.as.alice!.call('PATCH', '/v1/principals/alice-bot', { joinableBy: 'anyone' });
    expect(opened.status).toBe(200);
    expect(opened.body.principal).toMatchObject({ principalId: 'alice-bot', joinableBy: 'anyone' });
    const added = await w.as.bob!.post(`/v1/threads/${bobs}/participants`, {
      principalId: 'alice-bot',
      role: 'member',
    });
    expect(added.status).toBe(201);
    expect(added.body.grant).toMatchObject({ principalId: 'alice-bot', grantedBy: 'bob' });
  });

  it('revokes: an owner may remove anyone, anyone may leave, nobody else may remove', async () => {
    const t = await w.thread('alice');
    await w.grant('alice', t, 'bob');
    await w.grant('alice', t, 'carol');
    expect(code(await w.as.bob!.delete(`/v1/threads/${t}/participants/carol`))).toBe('forbidden');
    expect(code(await w.as.dave!.delete(`/v1/threads/${t}/participants/carol`))).toBe('forbidden');
    const removed = await w.as.alice!.delete(`/v1/threads/${t}/participants/carol`);
    expect(removed.status).toBe(204);
    expect((await w.as.bob!.delete(`/v1/threads/${t}/participants/bob`)).status).toBe(204);
    expect(code(await w.as.alice!.delete(`/v1/threads/${t}/participants/bob`))).toBe('not_found');
    expect(code(await w.as.bob!.delete(`/v1/threads/${t}/participants/bob`))).toBe('forbidden');
    const events = (await w.as.alice!.get(`/v1/threads/${t}/events?after=3`)).body.events;
    expect(events.map((e: any) => [e.type, e.principalId, e.data])).toEqual([
      ['participant_removed', 'system', { principalId: 'carol', role: 'member', by: 'alice' }],
      ['participant_removed', 'system', { principalId: 'bob', role: 'member', by: 'bob' }],
    ]);
    // access ends at once
    expect(code(await w.as.bob!.get(`/v1/threads/${t}/events`))).toBe('forbidden');
    expect(code(await w.as.carol!.post(`/v1/threads/${t}/events`, { type: 'acme.note', data: {} }))).toBe('forbidden');
    expect((await w.as.bob!.get('/v1/grants')).body.grants).toEqual([]);
    expect((await w.as.alice!.get(`/v1/threads/${t}/participants`)).body.grants.map((g: any) => g.principalId)).toEqual(
      ['alice'],
    );
  });

  it('publishes grant changes on the live bus after the participant events', async () => {
    const t = await w.thread('alice');
    const seen: Array<{ kind: string; change?: string }> = [];
    const off = w.server.server.bus.subscribe((m) =>
      seen.push({ kind: m.kind, ...(m.kind === 'grant' ? { change: m.change } : {}) }),
    );
    await w.grant('alice', t, 'bob');
    await w.as.alice!.delete(`/v1/threads/${t}/participants/bob`);
    off();
    expect(seen).toEqual([
      { kind: 'events' },
      { kind: 'grant', change: 'added' },
      { kind: 'events' },
      { kind: 'grant', change: 'revoked' },
    ]);
  });
});
