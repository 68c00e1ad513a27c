import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubbleClient, inviteTokenFromLocation } from '../src/index.js';
import { runBubble } from './support/run-bubble-cli.js';

/** `bubble invite-link`, `bubble invites …` and `bubble tokens …` against the real server. */
let server: TestServer;
let alice: BubbleClient;
let bobToken: string;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer();
  const aliceToken = (await server.createHuman('alice', 'Alice')).token.token;
  bobToken = (await server.createHuman('bob', 'Bob')).token.token;
  alice = new BubbleClient({ url: server.url, token: aliceToken });
  env = { BUBBLE_URL: server.url, BUBBLE_TOKEN: aliceToken };
});

afterAll(async () => {
  alice?.close();
  await server?.stop();
});

describe('bubble invite-link', () => {
  it('prints the web UI link of a new invite, which a second person joins with', async () => {
    const { thread } = await alice.createThread({ title: 'linked' });
    const result = await runBubble(
      ['invite-link', thread.threadId, '--role', 'member', '--expires', '2h', '--uses', '3'],
      env,
    );
    expect(result.code).toBe(0);
    const link = new URL(result.stdout.trim());
    expect(`${link.origin}${link.pathname}`).toBe(`${server.url}/invite`);
    const token = inviteTokenFromLocation(link.pathname, link.hash);
    expect(token).not.toBeNull();
    expect(result.stderr).toMatch(
      /^bubble: invite inv_\S+: joins as member, 3 uses, until \S+Z; anyone with the link may use it/,
    );

    const [invite] = await alice.listInvites(thread.threadId);
    expect(invite).toMatchObject({ role: 'member', maxUses: 3, uses: 0 });
    const hours = (Date.parse(invite!.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(1.9);
    expect(hours).toBeLessThanOrEqual(2);

    const bob = new BubbleClient({ url: server.url, token: bobToken });
    expect((await bob.acceptInvite(token!)).threadId).toBe(thread.threadId);
    bob.close();

    const listed = await runBubble(['invites', 'list', thread.threadId], env);
    expect(listed.stdout.trim().split('\t')).toEqual([invite!.inviteId, 'member', '1/3', invite!.expiresAt, 'alice']);
    const revoked = await runBubble(['invites', 'revoke', thread.threadId, invite!.inviteId], env);
    expect(revoked).toMatchObject({
      code: 0,
      stderr: `bubble: invite ${invite!.inviteId} revoked; its link no longer works\n`,
    });
  });

  it('takes --web-url for a UI served elsewhere, and fails clearly for a thread it does not own', async () => {
    const { thread } = await alice.createThread({ title: 'elsewhere' });
    const result = await runBubble(
      ['invite-link', thread.threadId, '--web-url', 'https://ui.example.com/bubble/'],
      env,
    );
    expect(result.stdout).toMatch(/^https:\/\/ui\.example\.com\/bubble\/invite#bubble_invite_[A-Za-z0-9_-]+\n$/);
    const notMine = await runBubble(['invite-link', thread.threadId], {
      BUBBLE_URL: server.url,
      BUBBLE_TOKEN: bobToken,
    });
    expect(notMine.code).toBe(1);
    expect(notMine.stderr).toMatch(/^bubble: (not_found|forbidden): /);
    expect(notMine.stdout).toBe('');
  });
});

describe('bubble tokens', () => {
  it('lists, mints (printed once) and revokes your own tokens; revoking the one in use says so', async () => {
    const listed = await runBubble(['tokens', 'list'], env);
    expect(listed.code).toBe(0);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    expect(rows.filter((r) => r[2] === 'current')).toHaveLength(1);

    const minted = await runBubble(['tokens', 'mint'], env);
    expect(minted.code).toBe(0);
    const token = minted.stdout.trim();
    expect(token).toMatch(/^bubble_user_/);
    const tokenId = /minted (tok_\S+);/.exec(minted.stderr)?.[1];
    expect(tokenId).toBeDefined();
    const mine = { BUBBLE_URL: server.url, BUBBLE_TOKEN: token };
    expect((await runBubble(['whoami'], mine)).stdout).toBe('alice\thuman\tAlice\n');
    expect((await runBubble(['tokens', 'list'], mine)).stdout).toContain(`${tokenId}\t`);

    const self = await runBubble(['tokens', 'revoke', tokenId!], mine);
    expect(self).toMatchObject({
      code: 0,
      stderr: `bubble: ${tokenId} revoked; it was the token this command used, so it no longer works\n`,
    });
    expect((await runBubble(['whoami'], mine)).code).toBe(3);
    expect((await runBubble(['whoami'], env)).code).toBe(0);
  });
});
