import { describe, expect, it } from 'vitest';
import { AuthController, memoizedFlow, userTokenFromFragment, type AuthDeps } from './auth-controller';
import { createAuthStorage, STORAGE_KEYS } from './auth-storage';
import type { OidcFlow } from './oidc-flow';
import type { OidcSession } from './oidc-session';
import type { PendingSignIn } from './pending-sign-in';

const USER = `bubble_user_${'A'.repeat(43)}`;
const INVITE = `bubble_invite_${'b'.repeat(43)}`;
const session: OidcSession = {
  issuer: 'https://idp.example/',
  clientId: 'spa',
  accessToken: 'at',
  receivedAt: 0,
  expiresAt: 3_600_000,
  refreshToken: 'rt',
  idToken: 'idt',
};

class MemoryStorage {
  readonly items = new Map<string, string>();
  getItem = (k: string) => this.items.get(k) ?? null;
  setItem = (k: string, v: string) => void this.items.set(k, v);
  removeItem = (k: string) => void this.items.delete(k);
}

function world(
  href: string,
  flow: Partial<OidcFlow> | null = null,
  options: {
    timers?: 'never' | 'immediate';
    oidcFlow?: () => Promise<OidcFlow | null>;
    replacePath?: (path: string, url: URL) => void;
  } = {},
) {
  const memory = new MemoryStorage();
  const storage = createAuthStorage(memory);
  // One live object, as the browser's Location is: rewriting the address changes it under the reader.
  const url = new URL(href);
  const assigned: string[] = [];
  const deps: AuthDeps = {
    storage,
    location: () => url,
    replacePath: (path) => {
      options.replacePath?.(path, url);
      url.href = new URL(path, url.origin).href;
    },
    assign: (to) => void assigned.push(to),
    oidcFlow:
      options.oidcFlow ??
      (async () =>
        flow === null
          ? null
          : ({
              config: { issuer: session.issuer, clientId: 'spa', audience: 'api' },
              signsOutAtProvider: true,
              ...flow,
            } as OidcFlow)),
    now: () => 1_000,
    setTimer: options.timers === 'immediate' ? (fn) => setTimeout(fn, 0) : () => 0,
    clearTimer: () => undefined,
  };
  return { controller: new AuthController(deps), memory, storage, assigned, address: () => url.toString() };
}

describe('AuthController.boot', () => {
  it('takes a sign-in link out of the address at once, and signs in with it only when confirmed', async () => {
    const w = world(`http://app.test/threads/th_1#token=${USER}`);
    expect(w.controller.boot()).toEqual({ kind: 'confirm-link', token: USER, current: null });
    expect(w.address()).toBe('http://app.test/threads/th_1');
    expect(w.memory.items.size).toBe(0);
    await w.controller.acceptLinkToken();
    expect(w.controller.state).toEqual({ kind: 'local', token: USER });
    expect(w.memory.getItem(STORAGE_KEYS.localToken)).toBe(USER);
  });

  it('forgets a declined sign-in link, storing nothing', () => {
    const w = world(`http://app.test/#token=${USER}`);
    w.controller.boot();
    w.controller.declineLinkToken();
    expect(w.controller.state).toEqual({ kind: 'signed-out', notice: null });
    expect(w.memory.items.size).toBe(0);
    expect(w.address()).toBe('http://app.test/');
  });

  it('keeps an invite link for after sign-in and removes it from the address', () => {
    const w = world(`http://app.test/invite#${INVITE}`);
    expect(w.controller.boot()).toEqual({ kind: 'signed-out', notice: null });
    expect(w.storage.pendingInvite()).toBe(INVITE);
    expect(w.address()).toBe('http://app.test/invite');
  });

  it('recognises the callback, and a stored provider session', () => {
    expect(world('http://app.test/auth/callback?code=c&state=s').controller.boot()).toEqual({ kind: 'finishing' });
    const w = world('http://app.test/');
    w.storage.setOidcSession(session);
    const state = w.controller.boot();
    expect(state.kind === 'oidc' && state.credentials.session?.accessToken).toBe('at');
  });

  it('holds one credential at a time', () => {
    const w = world('http://app.test/');
    w.storage.setOidcSession(session);
    w.controller.signInWithToken(USER);
    expect(w.storage.oidcSession()).toBeNull();
    expect(w.controller.state).toEqual({ kind: 'local', token: USER });
  });
});

describe('the provider round trip', () => {
  const pending: PendingSignIn = {
    issuer: session.issuer,
    clientId: 'spa',
    state: 's',
    nonce: 'n',
    codeVerifier: 'v',
    returnTo: '/invite',
    startedAt: 900,
  };

  it('leaves for the provider with what it must remember, and comes back signed in where it left', async () => {
    const finished: [string, PendingSignIn][] = [];
    const flow: Partial<OidcFlow> = {
      start: async (returnTo) => ({ url: 'https://idp.example/authorize?x', pending: { ...pending, returnTo } }),
      finish: async (url, p) => {
        finished.push([url.toString(), p]);
        return session;
      },
    };
    const out = world('http://app.test/invite', flow);
    out.controller.boot();
    await out.controller.startOidcSignIn('/invite');
    expect(out.assigned).toEqual(['https://idp.example/authorize?x']);
    const saved = out.memory.getItem(STORAGE_KEYS.pendingSignIn);

    const back = world('http://app.test/auth/callback?code=c&state=s', flow);
    back.memory.setItem(STORAGE_KEYS.pendingSignIn, saved!);
    back.controller.boot();
    await back.controller.finishOidcSignIn();
    expect(back.controller.state.kind).toBe('oidc');
    expect(finished[0]![0]).toBe('http://app.test/auth/callback?code=c&state=s');
    expect(back.address()).toBe('http://app.test/invite');
    expect(back.storage.oidcSession()).toEqual(session);
    // The pending sign-in is used once.
    expect(back.memory.getItem(STORAGE_KEYS.pendingSignIn)).toBeNull();
  });

  it('says why when the callback has no pending sign-in, or the provider refused', async () => {
    const stale = world('http://app.test/auth/callback?code=c&state=s', { finish: async () => session });
    stale.controller.boot();
    await stale.controller.finishOidcSignIn();
    expect(stale.controller.state).toEqual({
      kind: 'signed-out',
      notice: expect.stringContaining('already used or took too long'),
    });
    expect(stale.address()).toBe('http://app.test/');

    const refused = world('http://app.test/auth/callback?error=access_denied&state=s', {
      finish: async () => {
        throw Object.assign(new Error('authorization response error'), {
          error: 'access_denied',
          error_description: 'The user cancelled.',
        });
      },
    });
    refused.memory.setItem(STORAGE_KEYS.pendingSignIn, JSON.stringify(pending));
    refused.controller.boot();
    await refused.controller.finishOidcSignIn();
    expect(refused.controller.state).toEqual({
      kind: 'signed-out',
      notice: 'The sign-in did not complete: The user cancelled.',
    });
    expect(refused.storage.oidcSession()).toBeNull();
  });

  it('signs out at the provider too, and forgets everything here', async () => {
    const w = world('http://app.test/', {
      signOut: async (_s, returnTo) =>
        `https://idp.example/logout?post_logout_redirect_uri=${encodeURIComponent(returnTo)}`,
    });
    w.storage.setOidcSession(session);
    w.storage.setPendingInvite(INVITE);
    w.controller.boot();
    await w.controller.signOut();
    expect(w.controller.state).toEqual({ kind: 'signed-out', notice: null });
    expect(w.storage.oidcSession()).toBeNull();
    expect(w.storage.pendingInvite()).toBeNull();
    expect(w.assigned).toEqual(['https://idp.example/logout?post_logout_redirect_uri=http%3A%2F%2Fapp.test%2F']);
  });
});

describe('AuthController.end', () => {
  it('signs out with the first reason given; a second report of the same end changes nothing', () => {
    const w = world('http://app.test/');
    w.controller.signInWithToken(USER);
    w.controller.end('You revoked it.');
    w.controller.end('It was revoked or has ended.');
    expect(w.controller.state).toEqual({ kind: 'signed-out', notice: 'You revoked it.' });
    expect(w.storage.localToken()).toBeNull();
  });

  it('forgets a pending invite: the next sign-in does not join it', () => {
    const w = world('http://app.test/');
    w.controller.signInWithToken(USER);
    w.storage.setPendingInvite(INVITE);
    w.controller.end('It was revoked.');
    expect(w.storage.pendingInvite()).toBeNull();
  });
});

describe('a sign-in link in a tab that is already signed in', () => {
  const OTHER = `bubble_user_${'Z'.repeat(43)}`;

  it('asks first, changing nothing, and keeps the current sign-in when told to', () => {
    const w = world(`http://app.test/threads/th_1#token=${OTHER}`);
    w.storage.setOidcSession(session);
    expect(w.controller.boot()).toEqual({ kind: 'confirm-link', token: OTHER, current: 'oidc' });
    // The token leaves the address bar at once, and is not stored.
    expect(w.address()).toBe('http://app.test/threads/th_1');
    expect(w.storage.localToken()).toBeNull();
    expect(w.storage.oidcSession()).toEqual(session);
    w.controller.declineLinkToken();
    expect(w.controller.state.kind).toBe('oidc');
    expect(w.storage.localToken()).toBeNull();
  });

  it("switches when told to, revoking the provider session's refresh token", async () => {
    const revoked: (string | undefined)[] = [];
    const w = world(`http://app.test/#token=${OTHER}`, { revoke: async (s) => void revoked.push(s.refreshToken) });
    w.storage.setOidcSession(session);
    w.controller.boot();
    await w.controller.acceptLinkToken();
    expect(w.controller.state).toEqual({ kind: 'local', token: OTHER });
    expect(w.storage.oidcSession()).toBeNull();
    expect(w.storage.localToken()).toBe(OTHER);
    expect(revoked).toEqual(['rt']);
  });

  it('asks over another local token too, but not for the same token again', () => {
    const w = world(`http://app.test/#token=${OTHER}`);
    w.storage.setLocalToken(USER);
    expect(w.controller.boot()).toEqual({ kind: 'confirm-link', token: OTHER, current: 'local' });
    const same = world(`http://app.test/#token=${USER}`);
    same.storage.setLocalToken(USER);
    expect(same.controller.boot()).toEqual({ kind: 'local', token: USER });
  });
});

describe('landing after the callback', () => {
  const pending: PendingSignIn = {
    issuer: session.issuer,
    clientId: 'spa',
    state: 's',
    nonce: 'n',
    codeVerifier: 'v',
    returnTo: '/.//evil.example/x',
    startedAt: 900,
  };

  it('never lands off this origin, and falls back to / when the address cannot be set', async () => {
    const tried: string[] = [];
    const w = world(
      'http://app.test/auth/callback?code=c&state=s',
      { finish: async () => session },
      {
        replacePath: (path) => {
          tried.push(path);
          if (path !== '/') throw new DOMException('refused', 'SecurityError');
        },
      },
    );
    w.memory.setItem(STORAGE_KEYS.pendingSignIn, JSON.stringify({ ...pending, returnTo: '/threads/th_1' }));
    w.controller.boot();
    await w.controller.finishOidcSignIn();
    expect(tried).toEqual(['/threads/th_1', '/']);
    expect(w.address()).toBe('http://app.test/');
    expect(w.controller.state.kind).toBe('oidc');
  });
});

describe('signing out at the provider', () => {
  it('tries discovery again, and without it still ends the provider session at the end_session URL kept from the sign-in', async () => {
    let discoveries = 0;
    const w = world('http://app.test/', null, {
      timers: 'immediate',
      oidcFlow: async () => {
        discoveries += 1;
        throw new TypeError('Failed to fetch');
      },
    });
    w.storage.setOidcSession({
      ...session,
      expiresAt: 1_000 + 3_600_000,
      receivedAt: 1_000,
      endSessionEndpoint: 'https://idp.example/session/end',
    });
    w.controller.boot();
    await w.controller.signOut();
    expect(discoveries).toBe(3);
    expect(w.assigned).toHaveLength(1);
    const url = new URL(w.assigned[0]!);
    expect(url.origin + url.pathname).toBe('https://idp.example/session/end');
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe('http://app.test/');
    expect(url.searchParams.get('id_token_hint')).toBe('idt');
  });

  it('uses the flow when discovery works on a second try', async () => {
    let discoveries = 0;
    const flow = {
      config: { issuer: session.issuer, clientId: 'spa', audience: 'api' },
      revoke: async () => undefined,
      signOut: async () => 'https://idp.example/logout',
    } as unknown as OidcFlow;
    const w = world('http://app.test/', null, {
      timers: 'immediate',
      oidcFlow: async () => {
        discoveries += 1;
        if (discoveries === 1) throw new TypeError('Failed to fetch');
        return flow;
      },
    });
    w.storage.setOidcSession(session);
    w.controller.boot();
    await w.controller.signOut();
    expect(w.assigned).toEqual(['https://idp.example/logout']);
  });

  it('revokes the refresh token that a renewal in flight at sign-out brings back', async () => {
    let answer: ((s: OidcSession) => void) | undefined;
    const revoked: (string | undefined)[] = [];
    const signedOutWith: (string | undefined)[] = [];
    const w = world(
      'http://app.test/',
      {
        refresh: () => new Promise<OidcSession>((resolve) => (answer = resolve)),
        revoke: async (s) => void revoked.push(s.refreshToken),
        signOut: async (s) => {
          signedOutWith.push(s.refreshToken);
          revoked.push(s.refreshToken);
          return 'https://idp.example/logout';
        },
      },
      { timers: 'immediate' },
    );
    // Due for renewal at once: the timer starts a refresh, which is in flight when the person signs out.
    w.storage.setOidcSession({ ...session, receivedAt: 0, expiresAt: 1_200 });
    w.controller.boot();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answer).toBeDefined();
    const out = w.controller.signOut();
    answer!({ ...session, accessToken: 'at2', refreshToken: 'rt2', receivedAt: 1_000, expiresAt: 3_600_000 });
    await out;
    expect(revoked.sort()).toEqual(['rt', 'rt2']);
    expect(signedOutWith).toEqual(['rt2']);
    expect(w.storage.oidcSession()).toBeNull();
  });
});

describe('userTokenFromFragment', () => {
  it.each([
    [`#token=${USER}`, USER],
    [`#x=1&token=${USER}`, USER],
    [`#${INVITE}`, null],
    [`#token=bubble_agent_${'A'.repeat(43)}`, null],
  ])('%s', (hash, expected) => expect(userTokenFromFragment(hash)).toBe(expected));
});

describe('memoizedFlow', () => {
  it('discovers once, and again after a failure', async () => {
    let loads = 0;
    let fail = true;
    const get = memoizedFlow(
      async () => {
        loads += 1;
        if (fail) throw new Error('down');
        return { issuer: 'https://idp.example/', clientId: 'spa', audience: 'api' };
      },
      async (config) => ({ config }) as OidcFlow,
    );
    await expect(get()).rejects.toThrow('down');
    fail = false;
    await get();
    await get();
    expect(loads).toBe(2);
  });
});
