import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser } from './support/browser.js';
import {
  blockTheInternet,
  screenshot,
  serverCspAllows,
  signInAtProvider,
  say,
  startOidcWorld,
  type OidcWorld,
} from './support/oidc-world.js';

/**
 * Signing in with an identity provider (issue 15), in Debian's Chromium: the real server with
 * `oidc` pointing at a real OpenID provider (`oidc-provider` on loopback), whose own login and
 * consent pages the browser goes through. Access tokens live 20 s here, so renewal (refresh
 * token before expiry, and the socket's 4001 at expiry answered by resuming) happens in the test.
 */
const TTL_S = 20;
let world: OidcWorld;
let browser: TestBrowser;
let operator: BubbleClient;
let threadId: string;

/** Every WebSocket the page opens, with what it sent and received (T1: where a new socket resumes). */
interface SocketLog {
  readonly openedAt: number;
  closedAt: number | null;
  readonly sent: Record<string, unknown>[];
  readonly received: Record<string, unknown>[];
}
const sockets: SocketLog[] = [];
/** Every POST to the provider's token endpoint, with when it was sent. */
const tokenPosts: { at: number; grantType: string | null }[] = [];

function parseFrame(payload: string | Buffer): Record<string, unknown> | null {
  try {
    return JSON.parse(payload.toString()) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The `exp` (ms) of a JWT, read without verifying (the test only compares times). */
function expiryOf(jwt: string): number {
  const payload = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { exp: number };
  return payload.exp * 1000;
}

beforeAll(async () => {
  world = await startOidcWorld(
    { dana: { name: 'Dana Scully', preferred_username: 'dana', email: 'dana@example.com' } },
    { accessTokenTtlSeconds: TTL_S },
  );
  operator = new BubbleClient({ url: world.url, token: await world.human('ops', 'Operator') });
  browser = await openBrowser('people-oidc');
  await blockTheInternet(browser.page, [world.url, world.provider.issuer]);
  browser.page.on('websocket', (ws) => {
    const log: SocketLog = { openedAt: Date.now(), closedAt: null, sent: [], received: [] };
    sockets.push(log);
    ws.on('framesent', (f) => {
      const frame = parseFrame(f.payload);
      if (frame !== null) log.sent.push(frame);
    });
    ws.on('framereceived', (f) => {
      const frame = parseFrame(f.payload);
      if (frame !== null) log.received.push(frame);
    });
    ws.on('close', () => (log.closedAt = Date.now()));
  });
  browser.page.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === `${world.provider.issuer}/token`) {
      tokenPosts.push({ at: Date.now(), grantType: new URLSearchParams(request.postData() ?? '').get('grant_type') });
    }
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  operator?.close();
  await world?.stop();
});

const composer = () => browser.page.getByRole('textbox', { name: 'Message' });

let socketsSinceReload = 0;

describe('signing in with the identity provider', () => {
  it('serves the page with a CSP that lets it talk to the provider (discovery, token endpoint), and nothing else', async () => {
    const csp = (await fetch(`${world.url}/`)).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("connect-src 'self'");
    expect(
      serverCspAllows(csp, world.provider.issuer),
      `the page's CSP (${csp}) must name ${world.provider.issuer} in connect-src`,
    ).toBe(true);
    expect(csp).not.toContain('unsafe-inline');
  });

  it('offers "Sign in with" the provider, and signs in through its own login page', async () => {
    const { page, step } = browser;
    const info = await operator.info();
    expect(info.auth?.oidc).toEqual({
      issuer: world.provider.issuer,
      clientId: 'bubble-web-ui',
      audience: world.provider.audience,
    });
    await step('open', () => page.goto(world.url));
    const host = new URL(world.provider.issuer).host;
    const button = page.getByRole('button', { name: `Sign in with ${host}` });
    await step('button', () => button.waitFor());
    expect(await page.getByLabel('Your token').count()).toBe(1);
    await screenshot(page, 'oidc-1-sign-in-page');
    const authorize = page.waitForRequest((r) => r.url().startsWith(`${world.provider.issuer}/auth?`));
    await step('go to the provider', () => button.click());
    // The authorization request carries PKCE (S256), state, nonce, the audience and offline_access.
    const params = new URL((await authorize).url()).searchParams;
    expect(
      Object.fromEntries(
        ['response_type', 'client_id', 'redirect_uri', 'code_challenge_method', 'audience', 'scope'].map((k) => [
          k,
          params.get(k),
        ]),
      ),
    ).toEqual({
      response_type: 'code',
      client_id: 'bubble-web-ui',
      redirect_uri: `${world.url}/auth/callback`,
      code_challenge_method: 'S256',
      audience: world.provider.audience,
      scope: 'openid profile email offline_access',
    });
    for (const k of ['code_challenge', 'state', 'nonce']) expect(params.get(k)?.length ?? 0).toBeGreaterThanOrEqual(43);
    await step('provider pages', () => signInAtProvider(page, world.provider, 'dana', 'oidc-2'));
    await step('signed in', () => page.getByTestId('me').filter({ hasText: 'Dana Scully' }).waitFor());
    await screenshot(page, 'oidc-3-signed-in');
    expect(new URL(page.url()).pathname).toBe('/');
    expect(page.url()).not.toContain('code=');
    expect(world.provider.requestCount('/token')).toBeGreaterThanOrEqual(1);
    // The principal was created on first use, its id and name from the token's claims.
    const token = await page.evaluate(
      () => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').accessToken as string,
    );
    expect(token.split('.')).toHaveLength(3);
    const dana = new BubbleClient({ url: world.url, token });
    expect(await dana.whoami()).toMatchObject({ principalId: 'dana', kind: 'human', displayName: 'Dana Scully' });
    dana.close();
  });

  it('talks: creates a thread and posts a message with the access token as the bearer', async () => {
    const { page, step } = browser;
    await page.getByLabel('New thread').fill('Signed in with OIDC');
    await step('create', () => page.getByRole('button', { name: 'Create' }).click());
    await step('opened', () => page.getByRole('heading', { name: 'Signed in with OIDC' }).waitFor());
    threadId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    await composer().fill('hello from Dana');
    await composer().press('Enter');
    await step('sent', () => page.locator('article.run.mine', { hasText: 'hello from Dana' }).waitFor());
    await step('live', () => page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
    await screenshot(page, 'oidc-4-talking');
  });

  it('stays signed in across a reload', async () => {
    const { page, step } = browser;
    socketsSinceReload = sockets.length;
    await step('reload', () => page.reload());
    await step('still signed in', () => page.getByTestId('me').filter({ hasText: 'Dana Scully' }).waitFor());
    await step('same thread', () => page.locator('article.run.mine', { hasText: 'hello from Dana' }).waitFor());
    expect(await page.getByRole('button', { name: /^Sign in with/ }).count()).toBe(0);
  });

  it('renews the access token before it expires and resumes the live thread from its last seq after the 4001', async () => {
    const { page, step } = browser;
    const refreshesBefore = world.provider.requestCount('/token');
    const accessToken = () =>
      page.evaluate(() => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').accessToken as string);
    const tokenBefore = await accessToken();
    let socketsOpened = 0;
    page.on('websocket', () => (socketsOpened += 1));
    const expiresAt = expiryOf(tokenBefore);
    const postsBefore = tokenPosts.length;
    // Past the first token's expiry: it was renewed at three quarters of its life, and the
    // server closed the socket that signed in with it (4001) when it expired.
    await page.waitForTimeout(Math.max(0, expiresAt - Date.now()) + 4_000);
    const tokenAfter = await accessToken();
    expect(tokenAfter).not.toBe(tokenBefore);
    expect(world.provider.requestCount('/token')).toBeGreaterThan(refreshesBefore);
    // Renewed BEFORE the old token expired (a refresh grant sent ahead of its exp), not after a refusal.
    const refreshes = tokenPosts.slice(postsBefore).filter((p) => p.grantType === 'refresh_token');
    expect(refreshes.length).toBeGreaterThanOrEqual(1);
    expect(refreshes[0]!.at).toBeLessThan(expiresAt);
    expect(expiryOf(tokenAfter)).toBeGreaterThan(expiresAt);
    expect(socketsOpened).toBeGreaterThanOrEqual(1);
    // The socket that signed in with the old token closed; the next one subscribed to the thread
    // from the last seq the page had, and no event reached the page twice.
    const since = sockets.slice(socketsSinceReload);
    expect(since.length).toBeGreaterThanOrEqual(2);
    const threadSeqs = (log: SocketLog): number[] => {
      const ids = new Set(log.sent.filter((f) => f.type === 'subscribe' && f.threadId === threadId).map((f) => f.id));
      return log.received
        .filter((f) => f.type === 'event' && ids.has(f.id))
        .map((f) => (f.event as { seq: number }).seq);
    };
    let delivered: number[] = [];
    // What the page had: the seq it subscribed after (it loads history over HTTP first), or the last event since.
    let last = -1;
    for (const [i, log] of since.entries()) {
      const subscribes = log.sent.filter((f) => f.type === 'subscribe' && f.threadId === threadId);
      if (subscribes.length === 0) continue;
      if (i > 0 && last >= 0) expect(subscribes[0]!.afterSeq, `socket ${i} resumes where the page was`).toBe(last);
      const seqs = threadSeqs(log);
      delivered = [...delivered, ...seqs];
      last = Math.max(last, subscribes[0]!.afterSeq as number, ...seqs);
    }
    expect(new Set(delivered).size).toBe(delivered.length);
    expect(
      since
        .slice(1)
        .some((log) =>
          log.sent.some((f) => f.type === 'subscribe' && f.threadId === threadId && (f.afterSeq as number) > 0),
        ),
    ).toBe(true);
    await step('live again', () => page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
    expect(await page.getByTestId('me').textContent()).toBe('Dana Scully');

    // What someone else writes now reaches the page on its new socket.
    const dana = new BubbleClient({ url: world.url, token: tokenAfter });
    const writer = new BubbleClient({ url: world.url, token: await world.human('writer', 'Writer') });
    try {
      await dana.addParticipant(threadId, 'writer');
      // A stranger to Dana: the writer accepts her invitation (protocol.md, Consent).
      await writer.acceptInvitation(threadId);
      await say(writer, threadId, 'written while Dana was renewed');
      await step('live event', () =>
        page.locator('article.run', { hasText: 'written while Dana was renewed' }).waitFor(),
      );
    } finally {
      dana.close();
      writer.close();
    }
    await composer().fill('after the renewal');
    await composer().press('Enter');
    await step('sent after renewal', () =>
      page.locator('article.run.mine', { hasText: 'after the renewal' }).waitFor(),
    );
    await screenshot(page, 'oidc-5-after-renewal');
  }, 60_000);

  it('keeps the sign-in when the server cannot reach the identity provider (its 401 says so), and checks again', async () => {
    const { page, step } = browser;
    const unreachable = JSON.stringify({
      error: {
        code: 'unauthorized',
        message: `the identity provider ${world.provider.issuer} could not be reached to check this token (fetch failed); try again shortly`,
      },
    });
    let refused = 0;
    await page.route(`${world.url}/v1/auth/whoami`, (route) => {
      refused += 1;
      return route.fulfill({ status: 401, contentType: 'application/json', body: unreachable });
    });
    try {
      await step('reload', () => page.reload());
      await step('cannot check', () => page.getByText(/^Can't check sign-ins right now/).waitFor());
      await screenshot(page, 'oidc-8-cannot-check-sign-ins');
      // Still signed in: the session and its refresh token are kept.
      expect(
        await page.evaluate(
          () => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').refreshToken as string | undefined,
        ),
      ).toBeTruthy();
      expect(await page.getByRole('button', { name: /^Sign in with/ }).count()).toBe(0);
      // Tried again with backoff, not once and not in a tight loop.
      await step('tried again', () => expect.poll(() => refused, { timeout: 10_000 }).toBeGreaterThanOrEqual(2));
      expect(refused).toBeLessThan(6);
    } finally {
      await page.unroute(`${world.url}/v1/auth/whoami`);
    }
    await step('signed in again', () =>
      page.getByTestId('me').filter({ hasText: 'Dana Scully' }).waitFor({ timeout: 20_000 }),
    );
  }, 40_000);

  it('signs out: the tokens are forgotten, the refresh token revoked, and the provider session ends too', async () => {
    const { page, step } = browser;
    const refreshToken = await page.evaluate(
      () => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').refreshToken as string | undefined,
    );
    expect(refreshToken).toBeTruthy();
    await step('sign out', () => page.getByRole('button', { name: 'Sign out' }).click());
    // The provider asks whether to end its session too; yes, and it sends the browser back.
    const yes = page.getByRole('button', { name: 'Yes, sign me out' });
    await step('provider sign-out page', () => yes.waitFor());
    await screenshot(page, 'oidc-6-provider-sign-out');
    await step('confirm', () => yes.click());
    await step('back at the sign-in page', () => page.getByRole('button', { name: /^Sign in with/ }).waitFor());
    await screenshot(page, 'oidc-7-signed-out');
    expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('bubble.')))).toEqual([]);
    // The refresh token no longer works at the provider: it was revoked at sign-out.
    const refused = await fetch(`${world.provider.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: refreshToken!,
        client_id: 'bubble-web-ui',
      }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_grant');
    // Signing in again asks for the login again: the provider session is over.
    await step('sign in again', () => page.getByRole('button', { name: /^Sign in with/ }).click());
    await step('login asked again', () => page.locator('input[name="login"]').waitFor());
  });
});
