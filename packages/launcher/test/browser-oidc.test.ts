import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser } from './support/browser.js';
import { blockTheInternet, screenshot, serverCspAllows, signInAtProvider, startOidcWorld, type OidcWorld } from './support/oidc-world.js';

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

beforeAll(async () => {
  world = await startOidcWorld({ dana: { name: 'Dana Scully', preferred_username: 'dana', email: 'dana@example.com' } }, { accessTokenTtlSeconds: TTL_S });
  operator = new BubbleClient({ url: world.url, token: await world.human('ops', 'Operator') });
  browser = await openBrowser('people-oidc');
  await blockTheInternet(browser.page, [world.url, world.provider.issuer]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  operator?.close();
  await world?.stop();
});

const composer = () => browser.page.getByRole('textbox', { name: 'Message' });

/** One complete message, as the web UI's composer writes it. */
async function say(client: BubbleClient, thread: string, text: string): Promise<void> {
  const runId = `run-test-${Math.random().toString(36).slice(2)}`;
  await client.appendEvents(thread, [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
    { type: 'run_finished', data: { runId, status: 'completed' } },
  ]);
}

describe('signing in with the identity provider', () => {
  it("serves the page with a CSP that lets it talk to the provider (discovery, token endpoint), and nothing else", async () => {
    const csp = (await fetch(`${world.url}/`)).headers.get('content-security-policy') ?? '';
    expect(csp).toContain("connect-src 'self'");
    expect(serverCspAllows(csp, world.provider.issuer), `the page's CSP (${csp}) must name ${world.provider.issuer} in connect-src`).toBe(true);
    expect(csp).not.toContain('unsafe-inline');
  });

  it('offers "Sign in with" the provider, and signs in through its own login page', async () => {
    const { page, step } = browser;
    const info = await operator.info();
    expect(info.auth?.oidc).toEqual({ issuer: world.provider.issuer, clientId: 'bubble-web-ui', audience: world.provider.audience });
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
    expect(Object.fromEntries(['response_type', 'client_id', 'redirect_uri', 'code_challenge_method', 'audience', 'scope'].map((k) => [k, params.get(k)]))).toEqual({
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
    const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').accessToken as string);
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
    await step('reload', () => page.reload());
    await step('still signed in', () => page.getByTestId('me').filter({ hasText: 'Dana Scully' }).waitFor());
    await step('same thread', () => page.locator('article.run.mine', { hasText: 'hello from Dana' }).waitFor());
    expect(await page.getByRole('button', { name: /^Sign in with/ }).count()).toBe(0);
  });

  it('renews the access token before it expires and resumes the live thread from its last seq after the 4001', async () => {
    const { page, step } = browser;
    const refreshesBefore = world.provider.requestCount('/token');
    const accessToken = () => page.evaluate(() => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').accessToken as string);
    const tokenBefore = await accessToken();
    let socketsOpened = 0;
    page.on('websocket', () => (socketsOpened += 1));
    // Past the first token's expiry: it was renewed at three quarters of its life, and the
    // server closed the socket that signed in with it (4001) when it expired.
    await page.waitForTimeout((TTL_S + 4) * 1000);
    const tokenAfter = await accessToken();
    expect(tokenAfter).not.toBe(tokenBefore);
    expect(world.provider.requestCount('/token')).toBeGreaterThan(refreshesBefore);
    expect(socketsOpened).toBeGreaterThanOrEqual(1);
    await step('live again', () => page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
    expect(await page.getByTestId('me').textContent()).toBe('Dana Scully');

    // What someone else writes now reaches the page on its new socket.
    const dana = new BubbleClient({ url: world.url, token: tokenAfter });
    const writer = new BubbleClient({ url: world.url, token: await world.human('writer', 'Writer') });
    try {
      await dana.addParticipant(threadId, 'writer');
      await say(writer, threadId, 'written while Dana was renewed');
      await step('live event', () => page.locator('article.run', { hasText: 'written while Dana was renewed' }).waitFor());
    } finally {
      dana.close();
      writer.close();
    }
    await composer().fill('after the renewal');
    await composer().press('Enter');
    await step('sent after renewal', () => page.locator('article.run.mine', { hasText: 'after the renewal' }).waitFor());
    await screenshot(page, 'oidc-5-after-renewal');
  }, 60_000);

  it('signs out: the tokens are forgotten and the provider session ends too', async () => {
    const { page, step } = browser;
    await step('sign out', () => page.getByRole('button', { name: 'Sign out' }).click());
    // The provider asks whether to end its session too; yes, and it sends the browser back.
    const yes = page.getByRole('button', { name: 'Yes, sign me out' });
    await step('provider sign-out page', () => yes.waitFor());
    await screenshot(page, 'oidc-6-provider-sign-out');
    await step('confirm', () => yes.click());
    await step('back at the sign-in page', () => page.getByRole('button', { name: /^Sign in with/ }).waitFor());
    await screenshot(page, 'oidc-7-signed-out');
    expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('bubble.')))).toEqual([]);
    // Signing in again asks for the login again: the provider session is over.
    await step('sign in again', () => page.getByRole('button', { name: /^Sign in with/ }).click());
    await step('login asked again', () => page.locator('input[name="login"]').waitFor());
  });
});
