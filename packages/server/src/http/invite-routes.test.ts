import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOidcTestProvider, type OidcTestProvider } from '../testing/oidc-test-provider.js';
import type { TestClient } from '../testing/test-client.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';
import { TestSocket } from '../ws/ws-test-client.js';

let w: TestWorld;
let idp: OidcTestProvider;
let threadId: string;
beforeEach(async () => {
  idp = await startOidcTestProvider({
    accounts: {
      zoe: { name: 'Zoe Adams', preferred_username: 'zoe' },
      yan: { name: 'Yan', preferred_username: 'yan' },
    },
  });
  w = await startTestWorld(['alice', 'bob', 'carol'], {
    oidc: { issuer: idp.issuer, audience: idp.audience, clientId: idp.clientId },
  });
  threadId = await w.thread('alice', { title: 'plans' });
  await w.grant('alice', threadId, 'bob');
});
afterEach(async () => {
  await w.stop();
  await idp.close();
});

const signedIn = async (login: string): Promise<TestClient> => w.withToken((await idp.login(login)).accessToken);
const code = (res: { body: any }) => res.body?.error?.code;

describe('invites', () => {
  it('an owner creates one (member, 7 days, one use by default), with its token once, and lists it without', async () => {
    const before = Date.now();
    const res = await w.as.alice!.post(`/v1/threads/${threadId}/invites`);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      invite: {
        inviteId: expect.stringMatching(/^inv_/),
        threadId,
        role: 'member',
        createdBy: 'alice',
        expiresAt: expect.any(String),
        maxUses: 1,
        uses: 0,
        token: expect.stringMatching(/^bubble_invite_[A-Za-z0-9_-]{43,}$/),
      },
    });
    const sevenDays = 7 * 24 * 3600 * 1000;
    expect(Date.parse(res.body.invite.expiresAt) - before).toBeGreaterThanOrEqual(sevenDays - 1000);
    expect(Date.parse(res.body.invite.expiresAt) - Date.now()).toBeLessThanOrEqual(sevenDays);
    const { token, ...listed } = res.body.invite;
    const list = await w.as.alice!.get(`/v1/threads/${threadId}/invites`);
    expect(list.body).toEqual({ invites: [listed] });
    expect(list.text).not.toContain(token);
    const custom = await w.as.alice!.post(`/v1/threads/${threadId}/invites`, {
      role: 'owner',
      expiresInSeconds: 60,
      maxUses: 3,
    });
    expect(custom.body.invite).toMatchObject({ role: 'owner', maxUses: 3, uses: 0 });
  });

  it('only owners create, list and revoke: a member or an outsider is 403, an unknown thread 404', async () => {
    const inv = (await w.as.alice!.post(`/v1/threads/${threadId}/invites`)).body.invite;
    for (const who of ['bob', 'carol']) {
      expect(code(await w.as[who]!.post(`/v1/threads/${threadId}/invites`))).toBe('forbidden');
      expect(code(await w.as[who]!.get(`/v1/threads/${threadId}/invites`))).toBe('forbidden');
      expect(code(await w.as[who]!.delete(`/v1/threads/${threadId}/invites/${inv.inviteId}`))).toBe('forbidden');
    }
    expect(code(await w.as.alice!.post('/v1/threads/th_nowhere1234/invites'))).toBe('not_found');
    expect(code(await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { maxUses: 0 }))).toBe('invalid_request');
    expect(code(await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { expiresInSeconds: 0 }))).toBe(
      'invalid_request',
    );
    expect(code(await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { role: 'admin' }))).toBe('invalid_request');
  });

  it('brings in a person signed in with the identity provider: participant_added by the inviter, once', async () => {
    const inv = (await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { maxUses: 2 })).body.invite;
    const zoe = await signedIn('zoe');
    expect(code(await zoe.get(`/v1/threads/${threadId}`))).toBe('forbidden');
    const grants = await TestSocket.authenticated(w.server.wsUrl, (await idp.login('zoe')).accessToken);
    grants.socket.send({ type: 'subscribe_grants', id: 'g' });
    await grants.socket.next((f) => f.type === 'grants_synced');

    const accepted = await zoe.post('/v1/invites/accept', { token: inv.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({
      grant: {
        threadId,
        principalId: 'zoe',
        role: 'member',
        grantedBy: 'alice',
        grantedAt: expect.any(String),
        joinedSeq: 3,
        revokedAt: null,
      },
    });
    const events = (await zoe.get(`/v1/threads/${threadId}/events?after=2`)).body.events;
    expect(events).toEqual([
      expect.objectContaining({
        seq: 3,
        type: 'participant_added',
        principalId: 'system',
        data: { principalId: 'zoe', role: 'member', by: 'alice' },
      }),
    ]);
    expect(await grants.socket.next((f) => f.type === 'grant')).toMatchObject({
      change: 'added',
      grant: { threadId, principalId: 'zoe' },
    });
    grants.socket.close();

    // Opening the link again (a reload) while it has uses left answers the same grant and spends nothing.
    const again = await zoe.post('/v1/invites/accept', { token: inv.token });
    expect(again.status).toBe(200);
    expect(again.body.grant).toEqual(accepted.body.grant);
    expect((await zoe.get(`/v1/threads/${threadId}`)).body.thread.headSeq).toBe(3);
    expect((await w.as.alice!.get(`/v1/threads/${threadId}/invites`)).body.invites).toMatchObject([
      { uses: 1, maxUses: 2 },
    ]);
    expect((await (await signedIn('yan')).post('/v1/invites/accept', { token: inv.token })).status).toBe(200);
    // Two uses, its limit: gone from the owners' list, and 404 for everyone (protocol.md), zoe and yan included.
    expect((await w.as.alice!.get(`/v1/threads/${threadId}/invites`)).body.invites).toEqual([]);
    for (const who of [zoe, await signedIn('yan'), w.as.carol!]) {
      const late = await who.post('/v1/invites/accept', { token: inv.token });
      expect(late.status).toBe(404);
      expect(late.body.error.message).toContain('used 2 times');
    }
    // They stay in: a refused link takes nothing away.
    const participants = (await zoe.get(`/v1/threads/${threadId}/participants`)).body.grants.map(
      (g: { principalId: string }) => g.principalId,
    );
    expect(participants).toEqual(expect.arrayContaining(['zoe', 'yan']));
    // The people now see each other.
    expect((await w.as.alice!.get('/v1/principals/zoe')).body.principal).toMatchObject({
      principalId: 'zoe',
      displayName: 'Zoe Adams',
    });
  });

  it('counts uses up to maxUses, and an owner invite makes an owner', async () => {
    const inv = (await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { role: 'owner', maxUses: 2 })).body.invite;
    const promoted = await w.as.bob!.post('/v1/invites/accept', { token: inv.token });
    expect(promoted.body.grant).toMatchObject({ principalId: 'bob', role: 'owner' });
    expect((await w.as.carol!.post('/v1/invites/accept', { token: inv.token })).body.grant).toMatchObject({
      principalId: 'carol',
      role: 'owner',
      grantedBy: 'alice',
    });
    expect((await w.as.alice!.get(`/v1/threads/${threadId}/invites`)).body.invites).toEqual([]);
    expect(code(await (await signedIn('zoe')).post('/v1/invites/accept', { token: inv.token }))).toBe('not_found');
  });

  it('refuses a revoked invite and an expired one with 404', async () => {
    const revoked = (await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { maxUses: 5 })).body.invite;
    expect((await w.as.alice!.delete(`/v1/threads/${threadId}/invites/${revoked.inviteId}`)).status).toBe(204);
    expect(code(await w.as.alice!.delete(`/v1/threads/${threadId}/invites/${revoked.inviteId}`))).toBe('not_found');
    const refused = await w.as.carol!.post('/v1/invites/accept', { token: revoked.token });
    expect(refused.status).toBe(404);
    expect(refused.body.error.message).toContain('revoked');

    const short = (await w.as.alice!.post(`/v1/threads/${threadId}/invites`, { expiresInSeconds: 1, maxUses: 5 })).body
      .invite;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const expired = await w.as.carol!.post('/v1/invites/accept', { token: short.token });
    expect(expired.status).toBe(404);
    expect(expired.body.error.message).toContain('expired');
    expect((await w.as.alice!.get(`/v1/threads/${threadId}/invites`)).body.invites).toEqual([]);
    expect(code(await w.as.carol!.get(`/v1/threads/${threadId}`))).toBe('forbidden');
  });

  it('is for people: a bot may not accept; a token that is no invite is 404, no token 400', async () => {
    const inv = (await w.as.alice!.post(`/v1/threads/${threadId}/invites`)).body.invite;
    const bot = await w.bot('carol', 'bot-c');
    expect(code(await bot.post('/v1/invites/accept', { token: inv.token }))).toBe('forbidden');
    expect(code(await w.as.carol!.post('/v1/invites/accept', { token: `bubble_invite_${'A'.repeat(43)}` }))).toBe(
      'not_found',
    );
    expect(code(await w.as.carol!.post('/v1/invites/accept', { token: w.tokens.alice }))).toBe('not_found');
    expect(code(await w.as.carol!.post('/v1/invites/accept', {}))).toBe('invalid_request');
    expect(code(await w.anonymous.post('/v1/invites/accept', { token: inv.token }))).toBe('unauthorized');
    // Nothing was spent.
    expect((await w.as.alice!.get(`/v1/threads/${threadId}/invites`)).body.invites[0].uses).toBe(0);
  });

  it('stops working when its creator is no longer an owner of the thread', async () => {
    await w.grant('alice', threadId, 'bob', 'owner');
    const bobs = (await w.as.bob!.post(`/v1/threads/${threadId}/invites`, { maxUses: 5 })).body.invite;
    expect((await w.as.alice!.delete(`/v1/threads/${threadId}/participants/bob`)).status).toBe(204);
    const res = await w.as.carol!.post('/v1/invites/accept', { token: bobs.token });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('no longer an owner');
  });
});
