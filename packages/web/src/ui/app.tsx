import type { Principal } from '@bubble/protocol';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  BubbleApiError,
  createAnonymousClient,
  createClient,
  createTokenClient,
  describeError,
  migrateLegacyToken,
  type BubbleClient,
  type LiveState,
} from '../api';
import { tabTitle } from '../model/thread-signals';
import { AuthController, memoizedFlow, type AuthState } from '../auth/auth-controller';
import { createAuthStorage } from '../auth/auth-storage';
import { createOidcFlow } from '../auth/oidc-flow';
import { BotsPage } from './bots-page';
import { JoinInvite } from './join-invite';
import { navigate, parseRoute, TOKENS_PATH, useRoute } from './router';
import { issuerHost, SignIn, type OidcAvailability } from './sign-in';
import { Icon } from './icons';
import { ThemeToggle } from './theme-toggle';
import { InvitationsList } from './invitations-list';
import { ThreadList } from './thread-list';
import { ThreadView } from './thread-view';
import { TokensPage } from './tokens-page';

migrateLegacyToken();
const storage = createAuthStorage(window.sessionStorage);
const anonymous = createAnonymousClient();
/** The server's `auth.oidc`, read once per page (it says whether "Sign in with …" is offered). */
const oidcConfig = (() => {
  let info: Promise<Awaited<ReturnType<BubbleClient['info']>>> | null = null;
  return () => {
    info ??= anonymous.info().catch((error: unknown) => {
      info = null;
      throw error;
    });
    return info.then((i) => i.auth?.oidc ?? null);
  };
})();
const auth = new AuthController({
  storage,
  location: () => window.location,
  replacePath: (path) => navigate(path, { replace: true }),
  assign: (url) => window.location.assign(url),
  oidcFlow: memoizedFlow(oidcConfig, (config) => createOidcFlow(config, { origin: window.location.origin })),
  now: Date.now,
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
});
auth.boot();

const REVOKED_HERE = 'You revoked the token this browser was signed in with, so it is signed out.';
export const CANNOT_CHECK =
  "Can't check sign-ins right now: the server cannot reach the identity provider. You are still signed in; trying again…";
/** Between tries to check the sign-in while the server cannot reach the identity provider. */
const CHECK_RETRY_MS = [2_000, 5_000, 10_000, 30_000, 60_000];

function useAuth(): AuthState {
  const [state, setState] = useState<AuthState>(auth.state);
  useEffect(() => auth.subscribe(() => setState(auth.state)), []);
  return state;
}

function useOidcAvailability(): OidcAvailability {
  const [availability, setAvailability] = useState<OidcAvailability>({ state: 'loading' });
  useEffect(() => {
    oidcConfig().then(
      (config) => setAvailability(config === null ? { state: 'none' } : { state: 'available', config }),
      (err: unknown) =>
        setAvailability({
          state: 'unreachable',
          message: describeError(err, 'The server could not be asked how to sign in'),
        }),
    );
  }, []);
  return availability;
}

export function App() {
  const state = useAuth();
  const oidc = useOidcAvailability();
  const [me, setMe] = useState<Principal | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** Set while the server cannot check the sign-in (its identity provider is unreachable): not a sign-out. */
  const [checkTrouble, setCheckTrouble] = useState<string | null>(null);
  const [live, setLive] = useState<LiveState>('idle');
  const [pendingInvite, setPendingInvite] = useState<string | null>(() => storage.pendingInvite());
  // The tab's title says when an approval waits for you (and how many messages are unread).
  const [totals, setTotals] = useState({ approvals: 0, unread: 0 });
  useEffect(() => {
    document.title = me === null ? 'Bubble' : tabTitle(totals);
  }, [totals, me]);
  // One client per sign-in: a renewed access token goes on in the same client (and socket).
  const client = useMemo(() => {
    const credentials = AuthController.credentialsOf(state);
    return credentials === null ? null : createClient(credentials, setLive);
  }, [state]);
  const route = useRoute();
  // Set while this browser revokes its own token, so the socket's 4003 is told apart from a revocation elsewhere.
  const revokingOwn = useRef(false);

  useEffect(() => {
    if (state.kind === 'finishing') void auth.finishOidcSignIn();
    // Every change of sign-in starts clean: no revocation of "this browser" pending from the last
    // one, and the invite as storage has it now (an ended sign-in forgot it).
    revokingOwn.current = false;
    setPendingInvite(storage.pendingInvite());
  }, [state]);

  useEffect(() => {
    setMe(null);
    setError(null);
    setCheckTrouble(null);
    if (client === null) return;
    let cancelled = false;
    let failures = 0;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const ask = () =>
      client.whoami().then(
        (principal) => {
          if (cancelled) return;
          setCheckTrouble(null);
          setMe(principal);
        },
        (err: unknown) => {
          if (cancelled) return;
          if (err instanceof BubbleApiError && err.isAuthUnavailable) {
            // The server could not ask the identity provider (or there is no fresh token for now):
            // the sign-in stays, and is checked again with backoff.
            setCheckTrouble(CANNOT_CHECK);
            retry = setTimeout(ask, CHECK_RETRY_MS[Math.min(failures, CHECK_RETRY_MS.length - 1)]!);
            failures += 1;
            return;
          }
          if (err instanceof BubbleApiError && err.code === 'unauthorized') {
            auth.end(
              state.kind === 'oidc'
                ? `The server did not accept your sign-in: ${err.message}`
                : 'That token was not accepted. It may have been revoked.',
            );
          } else setError(describeError(err, 'Could not sign in'));
        },
      );
    ask();
    return () => {
      cancelled = true;
      clearTimeout(retry);
      client.close();
    };
  }, [client]);

  // A revoked credential closes the socket for good (4003): if the server refuses it over HTTP
  // too, this browser is signed out and says why.
  useEffect(() => {
    if (live !== 'failed' || client === null) return;
    client.whoami().catch((err: unknown) => {
      if (err instanceof BubbleApiError && err.isAuthUnavailable) setCheckTrouble(CANNOT_CHECK);
      else if (err instanceof BubbleApiError && err.code === 'unauthorized')
        auth.end(
          revokingOwn.current ? REVOKED_HERE : 'This browser was signed out: its sign-in was revoked or has ended.',
        );
    });
  }, [live, client]);

  if (state.kind === 'finishing') {
    return (
      <main class="center">
        <p role="status">Finishing sign-in…</p>
      </main>
    );
  }
  if (state.kind === 'confirm-link') {
    return (
      <ConfirmSignInLink
        token={state.token}
        current={state.current}
        onSignIn={() => void auth.acceptLinkToken()}
        onNotNow={() => auth.declineLinkToken()}
      />
    );
  }
  if (client === null || state.kind === 'signed-out') {
    return (
      <SignIn
        notice={state.kind === 'signed-out' ? state.notice : null}
        oidc={oidc}
        invited={pendingInvite !== null}
        onToken={(t) => auth.signInWithToken(t)}
        onOidc={() =>
          auth.startOidcSignIn(pendingInvite !== null ? '/invite' : window.location.pathname + window.location.search)
        }
      />
    );
  }
  if (me === null) {
    return (
      <main class="center">
        <p role="status">{checkTrouble ?? error ?? 'Signing in…'}</p>
      </main>
    );
  }
  const signOut = () => {
    navigate('/');
    void auth.signOut();
  };
  const page = pendingInvite !== null || route.page === 'invite' ? 'invite' : route.page;
  return (
    <div class={`shell page-${page}`}>
      <header class="topbar">
        {page !== 'home' && (
          <a
            class="back-to-list"
            href="/"
            onClick={(e) => {
              e.preventDefault();
              navigate('/');
            }}
          >
            <Icon name="back" />
            <span>Threads</span>
          </a>
        )}
        <a
          class="brand"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            navigate('/');
          }}
        >
          Bubble
        </a>
        <nav aria-label="Main">
          <a
            href="/bots"
            onClick={(e) => {
              e.preventDefault();
              navigate('/bots');
            }}
            aria-current={route.page === 'bots' ? 'page' : undefined}
          >
            Bots
          </a>
          <a
            href={TOKENS_PATH}
            onClick={(e) => {
              e.preventDefault();
              navigate(TOKENS_PATH);
            }}
            aria-current={route.page === 'tokens' ? 'page' : undefined}
          >
            Sessions and tokens
          </a>
        </nav>
        <span class={`live live-${live}`} role="status" aria-live="polite" data-testid="live-state">
          {live === 'ready'
            ? 'Live'
            : live === 'waiting' || live === 'connecting'
              ? 'Reconnecting…'
              : live === 'failed'
                ? 'Disconnected'
                : ''}
        </span>
        <span class="me">
          Signed in as <strong data-testid="me">{me.displayName}</strong>
          {state.kind === 'oidc' && (
            <span class="meta"> via {issuerHost(state.credentials.session?.issuer ?? '')}</span>
          )}
        </span>
        <ThemeToggle />
        <button type="button" class="link sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div class={`body ${page === 'home' ? 'at-home' : ''}`}>
        <aside class="sidebar" aria-label="Threads">
          <InvitationsList client={client} />
          <ThreadList
            client={client}
            me={me}
            currentThreadId={route.page === 'thread' ? route.threadId : null}
            onTotals={setTotals}
          />
        </aside>
        <main class="content">
          {page === 'invite' ? (
            <JoinInvite
              client={client}
              me={me}
              token={pendingInvite}
              onDone={() => {
                storage.setPendingInvite(null);
                setPendingInvite(null);
              }}
              onLeave={() => {
                // Leaving a link that could not be used (even for a passing reason) forgets it:
                // otherwise every load would bring the invite page back.
                storage.setPendingInvite(null);
                setPendingInvite(null);
                navigate('/');
              }}
            />
          ) : route.page === 'thread' ? (
            <ThreadView key={route.threadId} client={client} me={me} threadId={route.threadId} />
          ) : route.page === 'bots' ? (
            <BotsPage client={client} me={me} />
          ) : route.page === 'tokens' ? (
            <TokensPage
              client={client}
              me={me}
              signedInWith={
                state.kind === 'oidc'
                  ? { kind: 'oidc', issuerHost: issuerHost(state.credentials.session?.issuer ?? '') }
                  : { kind: 'local' }
              }
              onRevokingThisBrowser={(revoking) => {
                revokingOwn.current = revoking;
              }}
              onThisBrowserRevoked={() => {
                navigate('/');
                auth.end(REVOKED_HERE);
              }}
            />
          ) : (
            <section class="empty">
              <h1>Welcome, {me.displayName}</h1>
              <p>Open one of your threads, or start a new one.</p>
            </section>
          )}
        </main>
      </div>
    </div>
  );
}

/**
 * A sign-in link was opened: the page names the account it signs in as (`whoami` with the link's
 * token, the only call made with it) and signs in only on **Sign in**; **Not now** forgets it.
 * Someone else's link would otherwise sign this browser in as them, and what you wrote would be
 * theirs (issue 28).
 */
function ConfirmSignInLink(props: {
  token: string;
  current: 'local' | 'oidc' | null;
  onSignIn: () => void;
  onNotNow: () => void;
}) {
  const [account, setAccount] = useState<
    { state: 'checking' } | { state: 'known'; principal: Principal } | { state: 'failed'; message: string }
  >({ state: 'checking' });
  useEffect(() => {
    const client = createTokenClient(props.token);
    let cancelled = false;
    client.whoami().then(
      (principal) => !cancelled && setAccount({ state: 'known', principal }),
      (err: unknown) =>
        !cancelled &&
        setAccount({
          state: 'failed',
          message:
            err instanceof BubbleApiError && err.code === 'unauthorized'
              ? "This link's token was not accepted: it may have been revoked. Ask for a new link."
              : describeError(err, 'Could not check the link'),
        }),
    );
    return () => {
      cancelled = true;
      client.close();
    };
  }, [props.token]);
  const who = account.state === 'known' ? account.principal : null;
  return (
    <main class="center">
      <section class="card signin confirm-link" aria-labelledby="confirm-link-title">
        <h1 id="confirm-link-title">
          {who === null ? 'Sign in with this link?' : `Sign in as ${who.displayName} (${who.principalId})?`}
        </h1>
        {account.state === 'checking' && <p role="status">Checking the link…</p>}
        {account.state === 'failed' && (
          <p class="notice-box" role="alert">
            {account.message}
          </p>
        )}
        <p>
          Only sign in if this link is yours: someone else&apos;s link signs you in as them, and what you write would be
          theirs.
          {props.current !== null &&
            ` This tab is already signed in${props.current === 'oidc' ? ' with your identity provider' : ' with another token'}; signing in replaces that.`}
        </p>
        <p class="actions">
          <button type="button" class="primary" disabled={who === null} onClick={props.onSignIn}>
            Sign in
          </button>{' '}
          <button type="button" onClick={props.onNotNow}>
            Not now
          </button>
        </p>
      </section>
    </main>
  );
}

export { parseRoute };
export type { BubbleClient };
