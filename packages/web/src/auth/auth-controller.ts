import type { OidcInfo } from '@bubble/protocol';
import { inviteTokenFromLocation, type Credentials } from '@bubble/sdk/client';
import type { AuthStorage } from './auth-storage';
import { OidcCredentials } from './oidc-credentials';
import { providerSignOutUrl, type OidcFlow } from './oidc-flow';
import type { OidcSession } from './oidc-session';
import { CALLBACK_PATH, safeReturnPath } from './pending-sign-in';

/**
 * How this tab is signed in, as one value. Transitions: `boot` (from the address and the tab's
 * storage), `signInWithToken`, `startOidcSignIn` (leaves for the provider), `finishOidcSignIn`
 * (back from it), `signOut`, and `end` (the server or the provider ended the credential).
 */
export type AuthState =
  | { readonly kind: 'signed-out'; readonly notice: string | null }
  /** Back from the identity provider, trading the code for tokens. */
  | { readonly kind: 'finishing' }
  | { readonly kind: 'local'; readonly token: string }
  /**
   * A sign-in link (`#token=…`) was opened: nothing is stored and nothing changes until the person
   * confirms (`acceptLinkToken`) or declines (`declineLinkToken`), so someone else's link cannot
   * quietly sign this browser in as them (login CSRF, issue 28). `current` is how the tab is
   * signed in already, if it is.
   */
  | { readonly kind: 'confirm-link'; readonly token: string; readonly current: 'local' | 'oidc' | null }
  | { readonly kind: 'oidc'; readonly credentials: OidcCredentials };

export interface AuthDeps {
  readonly storage: AuthStorage;
  /** This page's address as the browser has it now. */
  readonly location: () => {
    readonly origin: string;
    readonly pathname: string;
    readonly search: string;
    readonly hash: string;
    readonly href: string;
  };
  /** Replaces the address without loading (removes a token from it, or lands after the callback). */
  readonly replacePath: (path: string) => void;
  /** Leaves the app for another page (the provider). */
  readonly assign: (url: string) => void;
  /** The provider flow of the server's `auth.oidc`, or null when it has none. */
  readonly oidcFlow: () => Promise<OidcFlow | null>;
  readonly now: () => number;
  readonly setTimer: (fn: () => void, ms: number) => unknown;
  readonly clearTimer: (timer: unknown) => void;
}

const USER_TOKEN = /^bubble_user_[A-Za-z0-9_-]{20,}$/;

/** The token of a sign-in link's fragment (`#token=bubble_user_…`), or null. */
export function userTokenFromFragment(hash: string): string | null {
  const params = new URLSearchParams(hash.startsWith('#') ? hash.slice(1) : hash);
  const token = params.get('token');
  return token !== null && USER_TOKEN.test(token) ? token : null;
}

export function isUserToken(token: string): boolean {
  return USER_TOKEN.test(token.trim());
}

export class AuthController {
  #state: AuthState = { kind: 'signed-out', notice: null };
  readonly #listeners = new Set<() => void>();
  readonly #deps: AuthDeps;

  constructor(deps: AuthDeps) {
    this.#deps = deps;
  }

  get state(): AuthState {
    return this.#state;
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The bearer source of a signed-in state. */
  static credentialsOf(state: AuthState): Credentials | null {
    if (state.kind === 'local') return { current: () => state.token };
    if (state.kind === 'oidc') return state.credentials;
    return null;
  }

  /**
   * Reads the address and the tab's storage once, at page load: an invite link is kept for after
   * sign-in and a sign-in link's token is taken, both then removed from the address bar (and so
   * from history); the provider's callback is recognised; otherwise the stored credential, if any.
   */
  boot(): AuthState {
    const { storage } = this.#deps;
    // A copy: the browser's Location changes under us when the address is rewritten.
    const here = { ...snapshot(this.#deps.location()) };
    const invite = inviteTokenFromLocation(here.pathname, here.hash);
    if (invite !== null) {
      storage.setPendingInvite(invite);
      this.#deps.replacePath(here.pathname);
    }
    const fromLink = userTokenFromFragment(here.hash);
    if (fromLink !== null) {
      this.#deps.replacePath(here.pathname + here.search);
      const stored = storage.localToken();
      const session = storage.oidcSession();
      // The page names the account and signs in only when the person says so; a link with the
      // token this tab already uses changes nothing, so there is nothing to ask.
      if (stored !== fromLink) {
        const current = stored !== null ? 'local' : session !== null ? 'oidc' : null;
        return this.#set({ kind: 'confirm-link', token: fromLink, current });
      }
    }
    if (here.pathname === CALLBACK_PATH) return this.#set({ kind: 'finishing' });
    return this.#set(this.#stored());
  }

  /** The sign-in link's token is stored and used, replacing any sign-in before (a provider session's refresh token is revoked). */
  async acceptLinkToken(): Promise<void> {
    const state = this.#state;
    if (state.kind !== 'confirm-link') return;
    const old = this.#deps.storage.oidcSession();
    this.#deps.storage.setLocalToken(state.token);
    this.#set({ kind: 'local', token: state.token });
    if (old !== null) {
      const flow = await this.#flowForSignOut();
      if (flow !== null && flow.config.issuer === old.issuer) await flow.revoke(old).catch(() => undefined);
    }
  }

  /** The sign-in link is forgotten: the tab stays as it was, signed in or not. */
  declineLinkToken(): void {
    if (this.#state.kind !== 'confirm-link') return;
    this.#set(this.#stored());
  }

  #stored(): AuthState {
    const { storage } = this.#deps;
    const token = storage.localToken();
    if (token !== null) return { kind: 'local', token };
    const session = storage.oidcSession();
    if (session !== null) return { kind: 'oidc', credentials: this.#credentials(session) };
    return { kind: 'signed-out', notice: null };
  }

  signInWithToken(token: string): void {
    this.#dispose();
    this.#deps.storage.setLocalToken(token.trim());
    this.#set({ kind: 'local', token: token.trim() });
  }

  /** Leaves for the provider's sign-in page; comes back to `returnTo`. */
  async startOidcSignIn(returnTo: string): Promise<void> {
    const flow = await this.#deps.oidcFlow();
    if (flow === null) throw new Error('this server signs in with tokens only');
    const { url, pending } = await flow.start(safeReturnPath(returnTo));
    this.#deps.storage.savePendingSignIn(pending);
    this.#deps.assign(url);
  }

  /** Back at the callback: checks the answer and signs in, or says why not. Runs once per callback. */
  async finishOidcSignIn(): Promise<void> {
    if (this.#state.kind !== 'finishing') return;
    const callbackUrl = this.#deps.location().href;
    const pending = this.#deps.storage.takePendingSignIn(this.#deps.now());
    // The code and state leave the address bar whatever happens next; a path the browser will
    // not take (history.replaceState throws for one off this origin) falls back to `/`.
    try {
      this.#deps.replacePath(safeReturnPath(pending?.returnTo ?? '/'));
    } catch {
      this.#deps.replacePath('/');
    }
    if (pending === null) {
      this.#set({ kind: 'signed-out', notice: 'That sign-in was already used or took too long. Sign in again.' });
      return;
    }
    try {
      const flow = await this.#deps.oidcFlow();
      if (flow === null) throw new Error('the server has no identity provider any more');
      const session = await flow.finish(new URL(callbackUrl), pending);
      this.#deps.storage.setOidcSession(session);
      this.#set({ kind: 'oidc', credentials: this.#credentials(session) });
    } catch (error) {
      this.#set({ kind: 'signed-out', notice: `The sign-in did not complete: ${describe(error)}` });
    }
  }

  /**
   * Forgets the credential. A provider session is ended at the provider too, where it can be
   * (the page then leaves for the provider's sign-out page, which sends the person back).
   */
  async signOut(): Promise<void> {
    const state = this.#state;
    const session: OidcSession | null = state.kind === 'oidc' ? state.credentials.session : null;
    // A renewal in flight brings back a (rotated) refresh token nobody would revoke otherwise.
    const inFlight = state.kind === 'oidc' ? state.credentials.pendingRenewal : null;
    this.#dispose();
    this.#deps.storage.clearCredentials();
    this.#deps.storage.setPendingInvite(null);
    this.#set({ kind: 'signed-out', notice: null });
    if (session === null) return;
    const returnTo = `${this.#deps.location().origin}/`;
    const renewed =
      inFlight === null
        ? null
        : await withTimeout(
            inFlight.catch(() => null),
            5_000,
            this.#deps,
          );
    const flow = await this.#flowForSignOut();
    let url: string | null = null;
    if (flow !== null) {
      // The newest refresh token is revoked by signOut; a rotated-away one is revoked too, in case
      // the provider keeps it alive.
      if (renewed !== null && renewed.refreshToken !== session.refreshToken)
        await flow.revoke(session).catch(() => undefined);
      url = await flow.signOut(renewed ?? session, returnTo).catch(() => null);
    } else {
      // Discovery failed even when tried again: the provider session still ends, at the
      // end_session URL kept from the sign-in (the refresh token could not be revoked).
      url = providerSignOutUrl(
        { issuer: session.issuer, clientId: session.clientId, endSessionEndpoint: undefined },
        renewed ?? session,
        returnTo,
      );
    }
    if (url) this.#deps.assign(url);
  }

  /** The provider flow, discovery tried three times (a provider that hiccups at sign-out still signs the person out). */
  async #flowForSignOut(): Promise<OidcFlow | null> {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        return await this.#deps.oidcFlow();
      } catch {
        if (attempt < 2) await new Promise<void>((resolve) => this.#deps.setTimer(resolve, 500 * (attempt + 1)));
      }
    }
    return null;
  }

  /** The credential stopped working (revoked, expired, refused): signed out here, with a note saying why. */
  end(notice: string): void {
    // The first reason stands: a revocation is seen on the socket (4003) and over HTTP at once.
    if (this.#state.kind === 'signed-out') return;
    this.#dispose();
    this.#deps.storage.clearCredentials();
    // An invite opened by this sign-in is not joined by the next one.
    this.#deps.storage.setPendingInvite(null);
    this.#set({ kind: 'signed-out', notice });
  }

  #credentials(session: OidcSession): OidcCredentials {
    return new OidcCredentials(session, {
      refresh: async (s) => {
        const flow = await this.#deps.oidcFlow();
        if (flow === null || flow.config.issuer !== s.issuer)
          throw new Error('the server no longer signs in with this identity provider');
        return flow.refresh(s);
      },
      onChange: (next, why) => {
        if (next !== null) this.#deps.storage.setOidcSession(next);
        else this.end(why ?? 'Your sign-in ended. Sign in again to go on.');
      },
      now: this.#deps.now,
      setTimer: this.#deps.setTimer,
      clearTimer: this.#deps.clearTimer,
    });
  }

  #dispose(): void {
    if (this.#state.kind === 'oidc') this.#state.credentials.dispose();
  }

  #set(state: AuthState): AuthState {
    this.#state = state;
    for (const listener of this.#listeners) listener();
    return state;
  }
}

/** The provider flow for `config`, created once and shared; a failed discovery is tried again next time. */
export function memoizedFlow(
  load: () => Promise<OidcInfo | null>,
  create: (config: OidcInfo) => Promise<OidcFlow>,
): () => Promise<OidcFlow | null> {
  let flow: Promise<OidcFlow | null> | null = null;
  return () => {
    flow ??= load()
      .then((config) => (config === null ? null : create(config)))
      .catch((error: unknown) => {
        flow = null;
        throw error;
      });
    return flow;
  };
}

/** `promise`'s value, or null when it takes longer than `ms`. */
function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  deps: Pick<AuthDeps, 'setTimer' | 'clearTimer'>,
): Promise<T | null> {
  return new Promise((resolve) => {
    const timer = deps.setTimer(() => resolve(null), ms);
    void promise.then((value) => {
      deps.clearTimer(timer);
      resolve(value);
    });
  });
}

function snapshot(l: { origin: string; pathname: string; search: string; hash: string; href: string }) {
  return { origin: l.origin, pathname: l.pathname, search: l.search, hash: l.hash, href: l.href };
}

function describe(error: unknown): string {
  const e = error as { error?: unknown; error_description?: unknown; message?: unknown };
  if (typeof e?.error_description === 'string' && e.error_description !== '') return e.error_description;
  if (typeof e?.error === 'string') return e.error;
  return typeof e?.message === 'string' ? e.message : String(error);
}
