/**
 * Grants and credentials across two real instances on one database: what is revoked through one
 * takes effect on the other (403, `subscription_ended`, 401 within the second the protocol's
 * "at once" allows, sockets closed with 4003), the grants stream on one reports changes made
 * through the other, and the operator CLI's revocation reaches both.
 */
import { CLOSE_CODES } from '@bubble/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/testing/cli-process.js';
import { sharedThread, startClusterWorld, subscribe, until, type ClusterWorld } from './support/cluster-world.js';

let world: ClusterWorld;

beforeAll(async () => {
  world = await startClusterWorld('cluster-access', { instances: 2 });
}, 60_000);

afterAll(async () => {
  await world?.close();
});

/** "At once" across instances: the revocation-everywhere target. */
const AT_ONCE_MS = 1_000;

describe('grants and credentials across instances', () => {
  it('a grant revoked on A ends the subscription on B, B refuses the append (403), and B\u2019s grants stream says so', async () => {
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const threadId = await sharedThread(a, world.tokens.alice!, ['bob'], world.tokens);
    const live = await b.socket(world.tokens.bob!);
    const grants = await b.socket(world.tokens.bob!);
    try {
      expect((await subscribe(live, 's', threadId)).type).toBe('subscribed');
      grants.send({ type: 'subscribe_grants', id: 'g' });
      const synced = await grants.until((f) => f.type === 'grants_synced');
      expect(synced.filter((f) => f.type === 'grant').map((f) => (f.grant as { threadId: string }).threadId)).toContain(
        threadId,
      );
      expect(
        (await b.as(world.tokens.bob!).post(`/v1/threads/${threadId}/events`, { type: 'acme.hi', data: {} })).status,
      ).toBe(201);

      const revoked = await a.as(world.tokens.alice!).delete(`/v1/threads/${threadId}/participants/bob`);
      expect(revoked.status).toBe(204);
      // The database is the truth for grants: B refuses at once.
      const refused = await b
        .as(world.tokens.bob!)
        .post(`/v1/threads/${threadId}/events`, { type: 'acme.hi', data: {} });
      expect(refused.status).toBe(403);
      const ended = await live.next((f) => f.type === 'subscription_ended', AT_ONCE_MS * 5);
      expect(ended).toEqual({ type: 'subscription_ended', id: 's', reason: 'grant_revoked' });
      const change = await grants.next((f) => f.type === 'grant', AT_ONCE_MS * 5);
      expect(change).toMatchObject({ id: 'g', change: 'revoked', grant: { threadId, principalId: 'bob' } });

      // And a grant made through A shows up on B's stream.
      const other = await sharedThread(a, world.tokens.alice!, ['bob'], world.tokens);
      const added = await grants.next((f) => f.type === 'grant', AT_ONCE_MS * 5);
      expect(added).toMatchObject({
        id: 'g',
        change: 'added',
        grant: { threadId: other, principalId: 'bob', role: 'member' },
      });
    } finally {
      live.close();
      grants.close();
    }
  });

  it('a token revoked on A is refused by B within a second (401), and its socket on B closes with 4003', async () => {
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const token = await world.createHuman('dave');
    // B has checked the token before (its cache knows it), and holds a socket authenticated with it.
    expect((await b.as(token).get('/v1/auth/whoami')).status).toBe(200);
    const socket = await b.socket(token);
    const { tokens } = (await a.as(token).get('/v1/auth/tokens')).body as { tokens: Array<{ tokenId: string }> };
    const started = performance.now();
    expect((await a.as(token).delete(`/v1/auth/tokens/${tokens[0]!.tokenId}`)).status).toBe(204);
    expect((await a.as(token).get('/v1/auth/whoami')).status).toBe(401);
    await until(async () => ((await b.as(token).get('/v1/auth/whoami')).status === 401 ? true : undefined), '401 on B');
    const refusedAfter = performance.now() - started;
    const closed = await socket.closed;
    const closedAfter = performance.now() - started;
    expect(closed.code).toBe(CLOSE_CODES.credentialRevoked);
    expect(refusedAfter).toBeLessThan(AT_ONCE_MS);
    expect(closedAfter).toBeLessThan(AT_ONCE_MS);
  });

  it('a rename through A shows on B, whose cache of the credential had the old name', async () => {
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const token = await world.createHuman('gus');
    expect((await b.as(token).get('/v1/auth/whoami')).body.principal.displayName).toBe('gus');
    expect((await a.as(token).call('PATCH', '/v1/principals/gus', { displayName: 'Gus' })).status).toBe(200);
    await until(
      async () => ((await b.as(token).get('/v1/auth/whoami')).body.principal.displayName === 'Gus' ? true : undefined),
      'the new name on B',
      AT_ONCE_MS,
    );
  });

  it("the operator CLI's revoke-tokens closes the person's sockets on every instance and both answer 401", async () => {
    const token = await world.createHuman('erin');
    const sockets = await Promise.all(world.instances.map((instance) => instance.socket(token)));
    for (const instance of world.instances) expect((await instance.as(token).get('/v1/auth/whoami')).status).toBe(200);
    const { stdout } = await runCli(['principal', 'revoke-tokens', 'erin', '--database', world.db.url]);
    expect(JSON.parse(stdout)).toMatchObject({ principalId: 'erin' });
    const closes = await Promise.all(sockets.map((socket) => socket.closed));
    expect(closes.map((c) => c.code)).toEqual(world.instances.map(() => CLOSE_CODES.credentialRevoked));
    for (const instance of world.instances) expect((await instance.as(token).get('/v1/auth/whoami')).status).toBe(401);
  });
});

describe('consent across instances (PostgreSQL)', () => {
  it('answers the same 202 bytes on A for a person and an unknown id; the person accepts on B and is on the thread everywhere', async () => {
    const [a, b] = world.instances as [(typeof world.instances)[0], (typeof world.instances)[0]];
    const ivy = await world.createHuman('ivy-consent');
    const stranger = await world.createHuman('stranger-cons');
    const threadId = await sharedThread(a, stranger);
    const add = (principalId: string) =>
      a.as(stranger).post(`/v1/threads/${threadId}/participants`, { principalId, role: 'member' });
    const known = await add('ivy-consent');
    const unknown = await add('ivy-consenx');
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(known.text.replace('ivy-consent', '<id>')).toBe(unknown.text.replace('ivy-consenx', '<id>'));
    expect((await a.as(stranger).get('/v1/principals/ivy-consent')).status).toBe(404);

    expect((await b.as(ivy).get('/v1/invitations')).body.invitations).toEqual([
      { threadId, title: 'shared', invitedBy: 'stranger-cons', role: 'member', createdAt: expect.any(String) },
    ]);
    const accepted = await b.as(ivy).post(`/v1/invitations/${threadId}/accept`);
    expect(accepted.status).toBe(200);
    expect(accepted.body.grant).toMatchObject({ threadId, principalId: 'ivy-consent', grantedBy: 'stranger-cons' });
    const participants = await a.as(stranger).get(`/v1/threads/${threadId}/participants`);
    expect(participants.body.grants.map((g: { principalId: string }) => g.principalId)).toEqual([
      'stranger-cons',
      'ivy-consent',
    ]);
    expect((await a.as(stranger).get('/v1/principals/ivy-consent')).status).toBe(200);
  });
});
