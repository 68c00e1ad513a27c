import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubbleApiError, BubbleClient, inviteLink, inviteTokenFromLocation } from '../src/index.js';
import { settle, take } from './support/live-helpers.js';

/** One's own tokens, invites and `auth` in discovery, through the typed client, against the real server. */
let server: TestServer;
let alice: BubbleClient;
let bob: BubbleClient;
let aliceToken: string;
const clients: BubbleClient[] = [];

async function apiError(promise: Promise<unknown>): Promise<BubbleApiError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(BubbleApiError);
  return outcome as BubbleApiError;
}

beforeAll(async () => {
  server = await startTestServer();
  aliceToken = (await server.createHuman('alice', 'Alice')).token.token;
  alice = new BubbleClient({ url: server.url, token: aliceToken, retry: false });
  bob = new BubbleClient({
    url: server.url,
    token: (await server.createHuman('bob', 'Bob')).token.token,
    retry: false,
  });
  clients.push(alice, bob);
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server?.stop();
});

describe('discovery', () => {
  it('has no auth.oidc on a server without an identity provider', async () => {
    const info = await new BubbleClient({ url: server.url }).info();
    expect(info.auth?.oidc).toBeUndefined();
  });
});

describe("one's own tokens", () => {
  it('lists them with the current one marked, mints another (shown once) and revokes it', async () => {
    const before = await alice.listMyTokens();
    expect(before.filter((t) => t.current === true)).toHaveLength(1);
    expect(before.every((t) => !('token' in t))).toBe(true);

    const minted = await alice.mintMyToken();
    expect(minted.token).toMatch(/^bubble_user_[A-Za-z0-9_-]{43,}$/);
    const second = new BubbleClient({ url: server.url, token: minted.token, retry: false });
    clients.push(second);
    expect((await second.whoami()).principalId).toBe('alice');
    const listed = await second.listMyTokens();
    expect(listed.find((t) => t.tokenId === minted.tokenId)?.current).toBe(true);
    expect(listed.filter((t) => t.current === true).map((t) => t.tokenId)).toEqual([minted.tokenId]);

    // Its open socket closes with 4003 when it is revoked.
    const grants = second.subscribeGrantsAsIterable();
    await grants.whenSynced();
    await alice.revokeMyToken(minted.tokenId);
    expect((await apiError(second.whoami())).code).toBe('unauthorized');
    const ended = await settle(grants.next());
    expect((ended.error as BubbleApiError).details.closeCode).toBe(4003);
    expect((await alice.listMyTokens()).map((t) => t.tokenId)).not.toContain(minted.tokenId);
  });

  it("cannot touch someone else's token", async () => {
    const [bobs] = await bob.listMyTokens();
    const error = await apiError(alice.revokeMyToken(bobs!.tokenId));
    expect(error.status).toBe(404);
    expect((await bob.whoami()).principalId).toBe('bob');
  });

  it('lets a bot list and revoke its own, but not mint one', async () => {
    const { token } = await alice.createBot({ principalId: 'bot-own-tokens' });
    const bot = new BubbleClient({ url: server.url, token: token.token, retry: false });
    clients.push(bot);
    expect((await bot.listMyTokens()).map((t) => [t.tokenId, t.current])).toEqual([[token.tokenId, true]]);
    expect((await apiError(bot.mintMyToken())).code).toBe('forbidden');
    await bot.revokeMyToken(token.tokenId);
    expect((await apiError(bot.whoami())).code).toBe('unauthorized');
  });
});

describe('invites', () => {
  it('creates one with defaults, lists it without its token, and a second person joins by it', async () => {
    const { thread } = await alice.createThread({ title: 'invited' });
    const invite = await alice.createInvite(thread.threadId);
    expect(invite).toMatchObject({
      threadId: thread.threadId,
      role: 'member',
      createdBy: 'alice',
      maxUses: 1,
      uses: 0,
    });
    expect(invite.token).toMatch(/^bubble_invite_/);
    const days = (Date.parse(invite.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
    const listed = await alice.listInvites(thread.threadId);
    expect(listed.map((i) => i.inviteId)).toEqual([invite.inviteId]);
    expect(listed.every((i) => !('token' in i))).toBe(true);

    // The link the web UI and the CLI share carries it in the fragment.
    const link = new URL(inviteLink(server.url, invite.token));
    expect(inviteTokenFromLocation(link.pathname, link.hash)).toBe(invite.token);

    const grants = bob.subscribeGrantsAsIterable();
    await grants.whenSynced();
    const grant = await bob.acceptInvite(invite.token);
    expect(grant).toMatchObject({ threadId: thread.threadId, principalId: 'bob', role: 'member', grantedBy: 'alice' });
    expect((await take(grants, 1))[0]).toMatchObject({ change: 'added', grant: { threadId: thread.threadId } });
    expect((await bob.getThread(thread.threadId)).title).toBe('invited');
    const joined = (await alice.readEvents(thread.threadId)).events.find(
      (e) => e.type === 'participant_added' && e.data.principalId === 'bob',
    );
    expect(joined?.data.by).toBe('alice');
    // Used up (1 of 1): no longer among the open invites.
    expect((await alice.listInvites(thread.threadId)).find((i) => i.inviteId === invite.inviteId)).toBeUndefined();
    // A use is counted: an invite for two, used once, is listed with one use.
    const twice = await alice.createInvite(thread.threadId, { maxUses: 2 });
    const dora = new BubbleClient({
      url: server.url,
      token: (await server.createHuman('dora', 'Dora')).token.token,
      retry: false,
    });
    clients.push(dora);
    await dora.acceptInvite(twice.token);
    const counted = (await alice.listInvites(thread.threadId)).find((i) => i.inviteId === twice.inviteId);
    expect(counted).toBeDefined();
    expect(counted!.uses).toBe(1);
  });

  it('answers not_found for a used-up, revoked or expired invite', async () => {
    const { thread } = await alice.createThread({ title: 'closed invites' });
    const carol = new BubbleClient({
      url: server.url,
      token: (await server.createHuman('carol', 'Carol')).token.token,
      retry: false,
    });
    clients.push(carol);

    const once = await alice.createInvite(thread.threadId, { maxUses: 1 });
    await bob.acceptInvite(once.token);
    expect((await apiError(carol.acceptInvite(once.token))).code).toBe('not_found');

    const revoked = await alice.createInvite(thread.threadId, { maxUses: 5, role: 'owner' });
    expect(revoked.role).toBe('owner');
    await alice.revokeInvite(thread.threadId, revoked.inviteId);
    expect((await apiError(carol.acceptInvite(revoked.token))).code).toBe('not_found');

    const short = await alice.createInvite(thread.threadId, { expiresInSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await apiError(carol.acceptInvite(short.token))).code).toBe('not_found');
    expect((await apiError(carol.acceptInvite('bubble_invite_not-a-real-one-not-a-real-one-not-a-real'))).code).toBe(
      'not_found',
    );
    await expect(carol.listThreads()).resolves.toEqual([]);
  });

  it('belongs to owners: a member may not create, list or revoke invites', async () => {
    const { thread } = await alice.createThread({ title: 'owners only' });
    await alice.addParticipant(thread.threadId, 'bob', 'member');
    expect((await apiError(bob.createInvite(thread.threadId))).code).toBe('forbidden');
    expect((await apiError(bob.listInvites(thread.threadId))).code).toBe('forbidden');
    const invite = await alice.createInvite(thread.threadId);
    expect((await apiError(bob.revokeInvite(thread.threadId, invite.inviteId))).code).toBe('forbidden');
  });
});
