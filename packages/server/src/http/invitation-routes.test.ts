/**
 * Consent (protocol.md, Threads and grants): a stranger who adds someone's id to their thread
 * learns nothing about that id, and the person joins only by accepting.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestResponse } from '../testing/test-client.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { TestSocket } from '../ws/ws-test-client.js';

let w: TestWorld;
beforeEach(async () => {
  // mallory is the stranger: she shares no thread with anyone.
  w = await startTestWorld(['alice', 'bob', 'mallory']);
});
afterEach(async () => {
  await w.stop();
});

const code = (res: { body: any }) => res.body?.error?.code;
const add = (who: string, threadId: string, principalId: string, role = 'member') =>
  w.as[who]!.post(`/v1/threads/${threadId}/participants`, { principalId, role });
/** The headers of an answer, without those that differ by design between any two answers. */
const sameHeaders = (res: TestResponse) => {
  const { date: _date, 'x-request-id': _id, ...rest } = res.headers;
  return rest;
};
const ids = (res: TestResponse) => (res.body.grants as Array<{ principalId: string }>).map((g) => g.principalId);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('adding someone the caller cannot see', () => {
  it('answers 202 with the same bytes and headers for a person, a hidden bot and an id that does not exist', async () => {
    await w.bot('alice', 'alice-bot');
    const t = await w.thread('mallory');
    const answers = new Map<string, TestResponse>();
    // The bytes are compared with the id swapped out (and content-length less the id's length).
    for (const id of ['bob', 'alice-bot', 'nobody-here']) answers.set(id, await add('mallory', t, id));
    for (const [id, res] of answers) {
      expect(res.status).toBe(202);
      expect(res.text).toBe(`{"invitation":{"threadId":"${t}","principalId":"${id}","status":"pending"}}`);
    }
    const bytes = (id: string) => answers.get(id)!.text.replace(id, '<id>');
    expect(bytes('bob')).toBe(bytes('nobody-here'));
    expect(bytes('alice-bot')).toBe(bytes('nobody-here'));
    const headers = (id: string) => {
      const h = sameHeaders(answers.get(id)!);
      return { ...h, 'content-length': Number(h['content-length']) - id.length };
    };
    expect(headers('bob')).toEqual(headers('nobody-here'));
    expect(headers('alice-bot')).toEqual(headers('nobody-here'));
    // Nothing appeared on mallory's thread, nor in its events.
    expect(ids(await w.as.mallory!.get(`/v1/threads/${t}/participants`))).toEqual(['mallory']);
    expect((await w.as.mallory!.get(`/v1/threads/${t}/events`)).body.events).toHaveLength(1);
    // A hidden bot gets no invitation: nothing happened (its owner is not told either).
    expect((await w.as.alice!.get('/v1/invitations')).body.invitations).toEqual([]);
  });

  it('takes about as long for an existing person as for an unknown id', async () => {
    const t = await w.thread('mallory');
    const existing: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 25; i += 1) {
      for (const [id, into] of [
        ['bob', existing],
        ['bxb', unknown],
      ] as const) {
        const started = performance.now();
        expect((await add('mallory', t, id)).status).toBe(202);
        into.push(performance.now() - started);
      }
    }
    const [a, b] = [median(existing), median(unknown)];
    // Both go through one read of the id and one write job; a gap of several ms (an fsync of its own) would
    // show. Medians of 25 alternating pairs, with room for a shared machine's noise.
    expect(Math.abs(a - b)).toBeLessThan(Math.max(2.5, 0.75 * Math.min(a, b)));
  });

  it('discloses nothing before the person accepts: not their record, not their presence, not their threads', async () => {
    const t = await w.thread('mallory');
    expect((await add('mallory', t, 'bob')).status).toBe(202);
    expect((await w.as.mallory!.get('/v1/principals/bob')).status).toBe(404);
    expect((await w.as.mallory!.get('/v1/principals?query=bob')).body.principals).toEqual([]);
    const { socket: watcher } = await TestSocket.authenticated(w.server.wsUrl, w.tokens.mallory!);
    const { socket: bobs } = await TestSocket.authenticated(w.server.wsUrl, w.tokens.bob!);
    try {
      watcher.send({ type: 'subscribe', id: 's', threadId: t, afterSeq: 1 });
      await watcher.next((f) => f.id === 's' && f.type === 'subscribed');
      // bob is online; mallory's thread hears of it neither by frame nor on its participant list.
      await w.as.mallory!.post(`/v1/threads/${t}/events`, { type: 'acme.note', data: {} });
      const frames = await watcher.until((f) => f.type === 'event');
      expect(frames.filter((f) => f.type === 'presence')).toEqual([]);
      expect((await w.as.mallory!.get(`/v1/threads/${t}/participants`)).body.grants).toEqual([
        expect.objectContaining({ principalId: 'mallory', online: true }),
      ]);
    } finally {
      watcher.close();
      bobs.close();
    }
    // bob's own thread list is unchanged.
    expect((await w.as.bob!.get('/v1/threads')).body.threads).toEqual([]);
    expect((await w.as.bob!.get('/v1/grants')).body.grants).toEqual([]);
  });

  it('grants a person the caller can see at once', async () => {
    await w.grant('alice', await w.thread('alice'), 'bob');
    const t = await w.thread('alice');
    const res = await add('alice', t, 'bob');
    expect(res.status).toBe(201);
    expect(res.body.grant).toMatchObject({ threadId: t, principalId: 'bob', grantedBy: 'alice' });
  });
});

describe('GET /v1/invitations, accept, decline', () => {
  it('shows the invitee their pending invitation; accepting makes them a participant, by the inviter', async () => {
    const t = await w.thread('alice', { title: 'Q3 research' });
    expect((await add('alice', t, 'bob', 'owner')).status).toBe(202);
    const listed = await w.as.bob!.get('/v1/invitations');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      invitations: [
        { threadId: t, title: 'Q3 research', invitedBy: 'alice', role: 'owner', createdAt: expect.any(String) },
      ],
    });
    // Nobody else sees it, and it is on no participant list.
    expect((await w.as.alice!.get('/v1/invitations')).body.invitations).toEqual([]);
    expect((await w.as.mallory!.get('/v1/invitations')).body.invitations).toEqual([]);
    expect(ids(await w.as.alice!.get(`/v1/threads/${t}/participants`))).toEqual(['alice']);
    // Only the invitee can take it up.
    expect(code(await w.as.mallory!.post(`/v1/invitations/${t}/accept`))).toBe('not_found');

    const accepted = await w.as.bob!.post(`/v1/invitations/${t}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      grant: {
        threadId: t,
        principalId: 'bob',
        role: 'owner',
        grantedBy: 'alice',
        grantedAt: expect.any(String),
        joinedSeq: 2,
        revokedAt: null,
      },
    });
    expect(ids(await w.as.alice!.get(`/v1/threads/${t}/participants`))).toEqual(['alice', 'bob']);
    const [event] = (await w.as.bob!.get(`/v1/threads/${t}/events?after=1`)).body.events;
    expect(event).toMatchObject({
      type: 'participant_added',
      principalId: 'system',
      data: { principalId: 'bob', role: 'owner', by: 'alice' },
    });
    expect((await w.as.alice!.get('/v1/principals/bob')).status).toBe(200);
    expect((await w.as.bob!.get('/v1/invitations')).body.invitations).toEqual([]);
    expect(code(await w.as.bob!.post(`/v1/invitations/${t}/accept`))).toBe('not_found');
  });

  it('declines with 204: the inviter is not told, and there is nothing left to accept', async () => {
    const t = await w.thread('alice');
    await add('alice', t, 'bob');
    const declined = await w.as.bob!.post(`/v1/invitations/${t}/decline`);
    expect(declined.status).toBe(204);
    expect(declined.text).toBe('');
    expect((await w.as.bob!.get('/v1/invitations')).body.invitations).toEqual([]);
    expect(code(await w.as.bob!.post(`/v1/invitations/${t}/accept`))).toBe('not_found');
    expect(code(await w.as.bob!.post(`/v1/invitations/${t}/decline`))).toBe('not_found');
    expect(ids(await w.as.alice!.get(`/v1/threads/${t}/participants`))).toEqual(['alice']);
    expect((await w.as.alice!.get(`/v1/threads/${t}/events`)).body.events).toHaveLength(1);
    // Adding bob again answers exactly as the first time.
    expect((await add('alice', t, 'bob')).status).toBe(202);
  });

  it('is void once the inviter left the thread: accept answers 404', async () => {
    const t = await w.thread('alice');
    await w.grant('alice', t, 'mallory');
    expect((await add('mallory', t, 'bob')).status).toBe(202);
    expect((await w.as.bob!.get('/v1/invitations')).body.invitations).toHaveLength(1);
    expect((await w.as.alice!.delete(`/v1/threads/${t}/participants/mallory`)).status).toBe(204);
    expect((await w.as.bob!.get('/v1/invitations')).body.invitations).toEqual([]);
    expect(code(await w.as.bob!.post(`/v1/invitations/${t}/accept`))).toBe('not_found');
    expect(ids(await w.as.alice!.get(`/v1/threads/${t}/participants`))).toEqual(['alice']);
  });

  it('refuses bots (invitations are for people) and callers without credentials', async () => {
    const bot = await w.bot('alice', 'bot-a');
    const t = await w.thread('alice');
    for (const res of [
      await bot.get('/v1/invitations'),
      await bot.post(`/v1/invitations/${t}/accept`),
      await bot.post(`/v1/invitations/${t}/decline`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toMatch(/invitations are for people/);
    }
    expect((await w.anonymous.get('/v1/invitations')).status).toBe(401);
    expect((await w.anonymous.post(`/v1/invitations/${t}/accept`)).status).toBe(401);
  });

  it('still needs the caller to be a participant, and an owner for the owner role, whatever the id', async () => {
    const t = await w.thread('alice');
    await w.grant('alice', t, 'bob');
    expect(code(await add('mallory', t, 'nobody'))).toBe('forbidden');
    expect(code(await add('bob', t, 'nobody', 'owner'))).toBe('forbidden');
    expect(code(await add('bob', t, 'mallory', 'owner'))).toBe('forbidden');
    expect(code(await add('alice', 'th_nothere123', 'bob'))).toBe('not_found');
    expect(code(await add('alice', t, 'Not An Id'))).toBe('invalid_request');
  });
});
