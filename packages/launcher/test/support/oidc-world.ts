import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBubbleServer, createHumanPrincipal, type BubbleServer } from '@bubble/server';
import { startOidcTestProvider, type OidcTestAccount, type OidcTestProvider } from '@bubble/server/testing/oidc';
import type { BubbleClient } from '@bubble/sdk';
import type { Page } from 'playwright-core';
import { DEFAULT_WEB_ROOT } from '../../src/launch.js';
import { SCREENSHOT_DIR } from './browser.js';

/**
 * The real server serving the built web UI, configured with `oidc` for a real OpenID provider
 * (`oidc-provider`, in-process on loopback, with its development login and consent pages):
 * what a browser test needs to sign people in the way Auth0 would.
 */
export interface OidcWorld {
  readonly server: BubbleServer;
  readonly provider: OidcTestProvider;
  /** The web UI's origin, `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** A human made the way the operator CLI makes one, with its local token. */
  human(principalId: string, displayName: string): Promise<string>;
  stop(): Promise<void>;
}

export const WEB_CLIENT_ID = 'bubble-web-ui';

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startOidcWorld(
  accounts: Record<string, OidcTestAccount>,
  options: { accessTokenTtlSeconds?: number } = {},
): Promise<OidcWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'bubble-oidc-'));
  // The provider registers the web UI's callback, so the UI's port is chosen first.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const provider = await startOidcTestProvider({
    accounts,
    clients: [{ clientId: WEB_CLIENT_ID, redirectUris: [`${url}/auth/callback`], postLogoutRedirectUris: [`${url}/`] }],
    ...(options.accessTokenTtlSeconds !== undefined ? { accessTokenTtlSeconds: options.accessTokenTtlSeconds } : {}),
  });
  const server = await createBubbleServer({
    dataDir: join(dir, 'data'),
    host: '127.0.0.1',
    port,
    webRoot: DEFAULT_WEB_ROOT,
    // A second of clock tolerance: a socket closes (4001) about when its token expires.
    oidc: { issuer: provider.issuer, audience: provider.audience, clientId: WEB_CLIENT_ID, clockToleranceSeconds: 1 },
    shutdownGraceMs: 2_000,
  });
  return {
    server,
    provider,
    url,
    human: async (principalId, displayName) =>
      (await createHumanPrincipal(server.store, principalId, displayName)).token.token,
    async stop() {
      await server.close();
      await provider.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The provider's pages load a web font from the internet; a test browser has no internet to wait for. */
export async function blockTheInternet(page: Page, allowedOrigins: string[]): Promise<void> {
  await page.context().route(
    (url) => !allowedOrigins.includes(url.origin),
    (route) => route.abort(),
  );
}

/** Signs `login` in on the provider's own login and consent pages (any password). */
export async function signInAtProvider(
  page: Page,
  provider: OidcTestProvider,
  login: string,
  shot?: string,
): Promise<void> {
  await page.waitForURL((u) => u.origin === provider.issuer);
  const loginBox = page.locator('input[name="login"]');
  await loginBox.waitFor();
  if (shot !== undefined) await screenshot(page, `${shot}-provider-login`);
  await loginBox.fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  // The consent page shows on a first sign-in to this client.
  const consent = page.getByRole('button', { name: 'Continue' });
  const back = page.waitForURL((u) => u.origin !== provider.issuer);
  const which = await Promise.race([
    consent.waitFor().then(() => 'consent' as const),
    back.then(() => 'back' as const),
  ]);
  if (which === 'consent') {
    if (shot !== undefined) await screenshot(page, `${shot}-provider-consent`);
    await consent.click();
    await back;
  }
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `people-${name}.png`);
  await page.screenshot({ path });
  return path;
}

/** Whether a CSP's `connect-src` lets the page fetch from `origin`. */
export function serverCspAllows(csp: string, origin: string): boolean {
  const connect = csp
    .split(';')
    .map((d) => d.trim().split(/\s+/))
    .find((d) => d[0] === 'connect-src');
  return connect?.slice(1).some((source) => source === origin || source === `${origin}/` || source === '*') ?? false;
}

/** One complete message, as the web UI's composer writes it. */
export async function say(client: BubbleClient, thread: string, text: string): Promise<void> {
  const runId = `run-test-${Math.random().toString(36).slice(2)}`;
  await client.appendEvents(thread, [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
    { type: 'run_finished', data: { runId, status: 'completed' } },
  ]);
}
