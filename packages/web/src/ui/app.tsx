import type { Principal } from '@bubble/protocol';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { BubbleApiError, createClient, isUserToken, loadToken, saveToken, tokenFromFragment, type BubbleClient, type LiveState } from '../api';
import { BotsPage } from './bots-page';
import { navigate, parseRoute, useRoute } from './router';
import { ThreadList } from './thread-list';
import { ThreadView } from './thread-view';

/** Reads a sign-in link's token from the fragment once, then removes it from the address bar. */
function initialToken(): string | null {
  const fromLink = tokenFromFragment(window.location.hash);
  if (fromLink !== null) {
    saveToken(fromLink);
    history.replaceState(null, '', window.location.pathname + window.location.search);
    return fromLink;
  }
  return loadToken();
}

export function App() {
  const [token, setToken] = useState<string | null>(initialToken);
  const [me, setMe] = useState<Principal | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [live, setLive] = useState<LiveState>('idle');
  const client = useMemo(() => (token === null ? null : createClient(token, setLive)), [token]);
  const route = useRoute();

  useEffect(() => {
    if (client === null) return;
    let cancelled = false;
    client.whoami().then(
      (principal) => {
        if (!cancelled) setMe(principal);
      },
      (err: unknown) => {
        if (cancelled) return;
        if (err instanceof BubbleApiError && err.code === 'unauthorized') {
          saveToken(null);
          setToken(null);
          setError('That token was not accepted. It may have been revoked.');
        } else setError(`Cannot reach the server: ${String((err as Error).message ?? err)}`);
      },
    );
    return () => {
      cancelled = true;
      client.close();
    };
  }, [client]);

  if (client === null || token === null) {
    return (
      <SignIn
        error={error}
        onToken={(t) => {
          saveToken(t);
          setError(null);
          setToken(t);
        }}
      />
    );
  }
  if (me === null) {
    return (
      <main class="center">
        <p role="status">{error ?? 'Signing in…'}</p>
      </main>
    );
  }
  const signOut = () => {
    saveToken(null);
    setMe(null);
    setToken(null);
    navigate('/');
  };
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href="/" onClick={(e) => (e.preventDefault(), navigate('/'))}>
          Bubble
        </a>
        <nav aria-label="Main">
          <a href="/bots" onClick={(e) => (e.preventDefault(), navigate('/bots'))} aria-current={route.page === 'bots' ? 'page' : undefined}>
            Bots
          </a>
        </nav>
        <span class={`live live-${live}`} role="status" aria-live="polite" data-testid="live-state">
          {live === 'ready' ? 'Live' : live === 'waiting' || live === 'connecting' ? 'Reconnecting…' : live === 'failed' ? 'Disconnected' : ''}
        </span>
        <span class="me">
          Signed in as <strong data-testid="me">{me.displayName}</strong>
        </span>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div class={`body ${route.page === 'home' ? 'at-home' : ''}`}>
        <aside class="sidebar" aria-label="Threads">
          <ThreadList client={client} me={me} currentThreadId={route.page === 'thread' ? route.threadId : null} />
        </aside>
        <main class="content">
          {route.page === 'thread' ? (
            <ThreadView key={route.threadId} client={client} me={me} threadId={route.threadId} />
          ) : route.page === 'bots' ? (
            <BotsPage client={client} me={me} />
          ) : (
            <section class="empty">
              <h1>Welcome, {me.displayName}</h1>
              <p>Pick a thread on the left, or start a new one.</p>
            </section>
          )}
        </main>
      </div>
    </div>
  );
}

function SignIn(props: { error: string | null; onToken: (token: string) => void }) {
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <main class="center">
      <form
        class="card signin"
        onSubmit={(e) => {
          e.preventDefault();
          const t = value.trim();
          if (!isUserToken(t)) {
            setProblem('A sign-in token starts with bubble_user_ (npm start prints a link that carries it).');
            return;
          }
          props.onToken(t);
        }}
      >
        <h1>Sign in to Bubble</h1>
        <p>Open the sign-in link that the server printed, or paste your token.</p>
        <label for="token">Your token</label>
        <input id="token" type="password" autoComplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} placeholder="bubble_user_…" />
        {(problem ?? props.error) && (
          <p class="error" role="alert">
            {problem ?? props.error}
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}

export { parseRoute };
export type { BubbleClient };
