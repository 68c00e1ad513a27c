import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';

let w: TestWorld;
beforeEach(async () => {
  w = await startTestWorld(['alice', 'bob', 'carol']);
});
afterEach(async () => {
  await w.stop();
});

const errorCode = (res: { body: any }) => res.body?.error?.code;

describe('authentication', () => {
  it('answers whoami for the caller', async () => {
    const res = await w.as.alice!.get('/v1/auth/whoami');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      principal: {
        principalId: 'alice',
        kind: 'human',
        displayName: 'alice',
        ownerPrincipalIds: [],
        createdAt: expect.any(String),
      },
    });
  });

  it.each([
    ['no header', undefined],
    ['a wrong scheme', 'Basic abc'],
    ['an unknown local token', `Bearer bubble_user_${'A'.repeat(43)}`],
    ['a non-token', 'Bearer hello'],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 unauthorized for %s', async (_name, header) => {
    const res = await w.anonymous.call(
      'GET',
      '/v1/auth/whoami',
      undefined,
      header ? { headers: { authorization: header } } : {},
    );
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String), details: {} } });
  });

  it('needs no credential for /v1/info and /healthz', async () => {
    const info = await w.anonymous.get('/v1/info');
    expect(info.status).toBe(200);
    expect(info.body).toEqual({
      name: 'bubble',
      version: '0.1.0',
      protocol: 1,
      extensions: { artifacts: { version: 1 } },
    });
    const health = await w.anonymous.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ ok: true });
  });
});

describe('bots and tokens', () => {
  it('lets a human create a bot, owning it, with a one-time bubble_agent_ token', async () => {
    const res = await w.as.alice!.post('/v1/principals', {
      principalId: 'bot-research',
      kind: 'bot',
      displayName: 'Research bot',
    });
    expect(res.status).toBe(201);
    expect(res.body.principal).toEqual({
      principalId: 'bot-research',
      kind: 'bot',
      displayName: 'Research bot',
      ownerPrincipalIds: ['alice'],
      joinableBy: 'owners',
      createdAt: expect.any(String),
    });
    expect(res.body.token).toEqual({
      tokenId: expect.stringMatching(/^tok_/),
      token: expect.stringMatching(/^bubble_agent_[A-Za-z0-9_-]{43,}$/),
      createdAt: expect.any(String),
    });
    const bot = w.withToken(res.body.token.token);
    expect((await bot.get('/v1/auth/whoami')).body.principal.principalId).toBe('bot-research');
    const listed = await w.as.alice!.get('/v1/principals/bot-research/tokens');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ tokens: [{ tokenId: res.body.token.tokenId, createdAt: expect.any(String) }] });
    expect(listed.text).not.toContain('bubble_agent_');
  });

  it('refuses a taken id (409), the reserved id system (409), a bad id (400), a human kind (400) and a bot creator (403)', async () => {
    await w.bot('alice', 'bot-a');
    expect(errorCode(await w.as.bob!.post('/v1/principals', { principalId: 'bot-a', kind: 'bot' }))).toBe('conflict');
    expect(errorCode(await w.as.bob!.post('/v1/principals', { principalId: 'alice', kind: 'bot' }))).toBe('conflict');
    expect(errorCode(await w.as.bob!.post('/v1/principals', { principalId: 'system', kind: 'bot' }))).toBe('conflict');
    const bad = await w.as.bob!.post('/v1/principals', { principalId: 'Bad Id', kind: 'bot' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.issues[0].path).toBe('principalId');
    expect((await w.as.bob!.post('/v1/principals', { principalId: 'human-2', kind: 'human' })).status).toBe(400);
    const res = await w.as['bot-a']!.post('/v1/principals', { principalId: 'bot-child', kind: 'bot' });
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('forbidden');
  });

  it('PATCH: owners change joinableBy and displayName; a principal may rename itself but not open itself up', async () => {
    const created = await w.as.alice!.post('/v1/principals', { principalId: 'bot-p', kind: 'bot' });
    const bot = w.withToken(created.body.token.token);
    const alice = w.as.alice!;
    const both = await alice.call('PATCH', '/v1/principals/bot-p', { joinableBy: 'anyone', displayName: 'Patched' });
    expect(both.status).toBe(200);
    expect(both.body.principal).toMatchObject({
      principalId: 'bot-p',
      displayName: 'Patched',
      joinableBy: 'anyone',
      ownerPrincipalIds: ['alice'],
    });
    expect((await alice.get('/v1/principals/bot-p')).body.principal.joinableBy).toBe('anyone');
    // The bot renames itself, but may not change who may add it.
    expect(
      (await bot.call('PATCH', '/v1/principals/bot-p', { displayName: 'Self-named' })).body.principal.displayName,
    ).toBe('Self-named');
    const widen = await bot.call('PATCH', '/v1/principals/bot-p', { joinableBy: 'owners' });
    expect(widen.status).toBe(403);
    expect(widen.body.error.message).toBe('only an owner of bot-p may change who may add it to threads');
    // A human renames itself; joinableBy is for bots only; humans carry no joinableBy.
    const self = await alice.call('PATCH', '/v1/principals/alice', { displayName: 'Alice A.' });
    expect(self.body.principal).toEqual({
      principalId: 'alice',
      kind: 'human',
      displayName: 'Alice A.',
      ownerPrincipalIds: [],
      createdAt: expect.any(String),
    });
    // Strangers: 404 for an invisible principal, 403 for a visible one they do not own.
    expect((await w.as.bob!.call('PATCH', '/v1/principals/bot-p', { joinableBy: 'owners' })).status).toBe(404);
    const t = await w.thread('alice');
    await w.grant('alice', t, 'bob');
    await w.grant('alice', t, 'bot-p');
    const bobRename = await w.as.bob!.call('PATCH', '/v1/principals/bot-p', { displayName: 'Bob was here' });
    expect(bobRename.status).toBe(403);
    expect(bobRename.body.error.message).toBe('only bot-p itself or one of its owners may rename it');
    expect((await w.as.bob!.call('PATCH', '/v1/principals/alice', { displayName: 'x' })).status).toBe(403);
    // Bad bodies say what is wrong.
    const cases: Array<[unknown, string]> = [
      [{}, 'name at least one of displayName and joinableBy'],
      [{ joinableBy: 'everyone' }, 'joinableBy must be "owners" or "anyone"'],
      [{ displayName: '' }, 'displayName'],
    ];
    for (const [body, message] of cases) {
      const res = await alice.call('PATCH', '/v1/principals/bot-p', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toContain(message);
    }
    const human = await alice.call('PATCH', '/v1/principals/alice', { joinableBy: 'anyone' });
    expect(human.status).toBe(400);
    expect(human.body.error.message).toBe('joinableBy applies to bots only');
    expect((await alice.call('PATCH', '/v1/principals/nobody', { displayName: 'x' })).status).toBe(404);
  });

  it('lets only owners mint, list and revoke; a revoked token fails at once', async () => {
    const bot = await w.bot('alice', 'bot-a');
    const minted = await w.as.alice!.post('/v1/principals/bot-a/tokens');
    expect(minted.status).toBe(201);
    expect(minted.body.token.token).toMatch(/^bubble_agent_/);
    const second = w.withToken(minted.body.token.token);
    expect((await second.get('/v1/auth/whoami')).status).toBe(200);
    // the route takes no fields: an empty JSON object is as good as no body
    const third = await w.as.alice!.post('/v1/principals/bot-a/tokens', {});
    expect(third.status).toBe(201);
    expect(third.body.token.token).not.toBe(minted.body.token.token);

    // bob cannot see bot-a at all: 404, as for an unknown id
    expect((await w.as.bob!.post('/v1/principals/bot-a/tokens')).status).toBe(404);
    expect((await w.as.bob!.get('/v1/principals/bot-a/tokens')).status).toBe(404);
    expect((await w.as.bob!.delete('/v1/principals/bot-a/tokens')).status).toBe(404);
    // the bot sees itself but does not own itself: 403
    expect((await bot.post('/v1/principals/bot-a/tokens')).status).toBe(403);
    expect((await bot.get('/v1/principals/bot-a/tokens')).status).toBe(403);
    // a human sees its own bot's owner but does not own it
    expect((await bot.get('/v1/principals/alice/tokens')).status).toBe(403);

    const revoke = await w.as.alice!.delete(`/v1/principals/bot-a/tokens/${minted.body.token.tokenId}`);
    expect(revoke.status).toBe(204);
    expect(revoke.text).toBe('');
    expect((await second.get('/v1/auth/whoami')).status).toBe(401);
    expect((await bot.get('/v1/auth/whoami')).status).toBe(200);
    expect((await w.as.alice!.delete(`/v1/principals/bot-a/tokens/${minted.body.token.tokenId}`)).status).toBe(404);
    expect((await w.as.alice!.delete('/v1/principals/bot-a/tokens/tok_unknown')).status).toBe(404);

    expect((await w.as.alice!.delete('/v1/principals/bot-a/tokens')).status).toBe(204);
    expect((await bot.get('/v1/auth/whoami')).status).toBe(401);
    expect((await w.as.alice!.get('/v1/principals/bot-a/tokens')).body).toEqual({ tokens: [] });
  });

  it('publishes token revocation on the live bus', async () => {
    await w.bot('alice', 'bot-a');
    const seen: unknown[] = [];
    const off = w.server.server.bus.subscribe((m) => seen.push(m));
    await w.as.alice!.delete('/v1/principals/bot-a/tokens');
    off();
    expect(seen).toEqual([
      { kind: 'tokens_revoked', principalId: 'bot-a', tokenIds: [expect.stringMatching(/^tok_/)] },
    ]);
  });
});

describe('principal visibility', () => {
  it('shows self, owned bots, owners and co-readers, and answers 404 for anyone else', async () => {
    await w.bot('alice', 'bot-a');
    const names = async (who: string, query = '') =>
      ((await w.as[who]!.get(`/v1/principals?query=${query}`)).body.principals as Array<{ principalId: string }>).map(
        (p) => p.principalId,
      );
    expect(await names('alice')).toEqual(['alice', 'bot-a']);
    expect(await names('bot-a')).toEqual(['alice', 'bot-a']);
    expect(await names('bob')).toEqual(['bob']);
    expect((await w.as.bob!.get('/v1/principals/alice')).status).toBe(404);
    expect((await w.as.bob!.get('/v1/principals/nobody')).status).toBe(404);
    // an invisible principal is answered exactly like an unknown one
    expect((await w.as.bob!.get('/v1/principals/alice')).body).toEqual({
      error: { code: 'not_found', message: 'principal alice not found', details: {} },
    });
    expect((await w.as.bob!.get('/v1/principals/nobody')).body).toEqual({
      error: { code: 'not_found', message: 'principal nobody not found', details: {} },
    });

    const t = await w.thread('alice');
    await w.grant('alice', t, 'bob');
    expect(await names('bob')).toEqual(['alice', 'bob']);
    expect((await w.as.bob!.get('/v1/principals/alice')).body.principal.principalId).toBe('alice');
    // carol reads a subthread only through its parent: she sees the parent's participants
    const sub = (await w.as.bob!.post('/v1/threads', { parentThreadId: t })).body.thread.threadId as string;
    await w.grant('alice', t, 'carol');
    expect(await names('carol')).toEqual(['alice', 'bob', 'carol']);
    expect(sub).toContain('.sub-');

    await w.as.alice!.delete(`/v1/threads/${t}/participants/bob`);
    expect(await names('bob')).toEqual(['bob']);
    expect((await w.as.bob!.get('/v1/principals/alice')).status).toBe(404);
  });

  it('searches id and displayName, case-insensitively, with a limit; bad limits are 400', async () => {
    for (const [id, name] of [
      ['bot-a', 'Alpha'],
      ['bot-b', 'Beta Research'],
      ['bot-c', 'Gamma'],
    ] as const) {
      await w.as.alice!.post('/v1/principals', { principalId: id, kind: 'bot', displayName: name });
    }
    const ids = (res: { body: any }) => res.body.principals.map((p: { principalId: string }) => p.principalId);
    expect(ids(await w.as.alice!.get('/v1/principals?query=RESEARCH'))).toEqual(['bot-b']);
    expect(ids(await w.as.alice!.get('/v1/principals?query=bot-&limit=2'))).toEqual(['bot-a', 'bot-b']);
    expect((await w.as.alice!.get('/v1/principals?limit=0')).status).toBe(400);
    expect((await w.as.alice!.get('/v1/principals?limit=1001')).status).toBe(400);
    expect((await w.as.alice!.get('/v1/principals?limit=ten')).status).toBe(400);
  });
});
