import type { OwnTokenInfo, Principal } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import { relativeTime } from '../model/relative-time';

export type SignedInWith = { readonly kind: 'local' } | { readonly kind: 'oidc'; readonly issuerHost: string };

/**
 * "Your sessions and tokens": the caller's own local tokens (the one this browser uses marked),
 * a new one minted for a terminal or a script (shown once), and any of them revoked. Revoking
 * this browser's own token signs it out, as it does everywhere else the token was used.
 */
export function TokensPage(props: {
  client: BubbleClient;
  me: Principal;
  signedInWith: SignedInWith;
  /** Called before (true) and, if it failed, after (false) revoking this browser's own token. */
  onRevokingThisBrowser: (revoking: boolean) => void;
  onThisBrowserRevoked: () => void;
}) {
  const { client } = props;
  const [tokens, setTokens] = useState<OwnTokenInfo[] | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [fresh, setFresh] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reload = () =>
    client.listMyTokens().then(
      (list) =>
        setTokens(
          [...list].sort(
            (a, b) => Number(b.current === true) - Number(a.current === true) || b.createdAt.localeCompare(a.createdAt),
          ),
        ),
      (err: unknown) => setMessage(`Could not load your tokens: ${(err as Error).message}`),
    );
  useEffect(() => {
    void reload();
  }, [client]);

  const mint = async () => {
    setBusy(true);
    try {
      const token = await client.mintMyToken();
      setFresh(token.token);
      setMessage(null);
      void reload();
    } catch (err) {
      setMessage(`Could not make a token: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (token: OwnTokenInfo) => {
    if (
      token.current === true &&
      !window.confirm('This is the token this browser is signed in with. Revoke it and sign out here?')
    )
      return;
    if (token.current === true) props.onRevokingThisBrowser(true);
    try {
      await client.revokeMyToken(token.tokenId);
      if (token.current === true) {
        props.onThisBrowserRevoked();
        return;
      }
      setMessage(`Revoked ${token.tokenId}. Anything that used it is signed out.`);
      void reload();
    } catch (err) {
      if (token.current === true) props.onRevokingThisBrowser(false);
      setMessage(`Could not revoke ${token.tokenId}: ${(err as Error).message}`);
    }
  };

  const now = Date.now();
  return (
    <section class="page tokens" aria-labelledby="tokens-title">
      <h1 id="tokens-title">Your sessions and tokens</h1>
      <p class="meta">
        {props.signedInWith.kind === 'oidc'
          ? `This browser is signed in through ${props.signedInWith.issuerHost}; that sign-in is ` +
            `renewed by itself and ends when you sign out, so it is not a token listed here.`
          : 'This browser is signed in with one of the tokens below, marked "this browser".'}{' '}
        A token works until it is revoked: revoke any you no longer use, or one that may have leaked.
      </p>
      {message && <p role="status">{message}</p>}
      {fresh && <FreshToken token={fresh} onDone={() => setFresh(null)} />}
      {tokens === null ? (
        <p role="status">Loading…</p>
      ) : tokens.length === 0 ? (
        <p class="meta">You have no Bubble tokens.</p>
      ) : (
        <ul class="token-list" aria-label="Your tokens">
          {tokens.map((t) => (
            <li key={t.tokenId} data-token-id={t.tokenId}>
              <span class="token-id">{t.tokenId}</span>
              {t.current === true && <span class="pill">this browser</span>}
              <span class="meta" title={t.createdAt}>
                made {relativeTime(t.createdAt, now)}
              </span>
              <button
                type="button"
                class="danger"
                onClick={() => void revoke(t)}
                aria-label={`Revoke ${t.tokenId}${t.current === true ? ' (this browser)' : ''}`}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      {props.me.kind === 'human' && (
        <div class="card">
          <h2>A token for the terminal or a script</h2>
          <p class="meta">
            The <code>bubble</code> command line takes it in <code>BUBBLE_TOKEN</code>. It acts as you, everywhere you
            are, until you revoke it.
          </p>
          <button type="button" disabled={busy} onClick={() => void mint()}>
            Make a new token
          </button>
        </div>
      )}
    </section>
  );
}

function FreshToken(props: { token: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.token);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a card of related controls, not a form: role=group names it without fieldset semantics
    <div class="card fresh-token" role="group" aria-label="Your new token">
      <h2>Your new token</h2>
      <p>It is shown only this once: copy it now.</p>
      <div class="row">
        <input
          readOnly
          value={props.token}
          data-testid="fresh-own-token"
          aria-label="New token"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre class="snippet">{`export BUBBLE_URL=${window.location.origin}\nexport BUBBLE_TOKEN=<the token above>\nbubble whoami`}</pre>
      <button type="button" onClick={props.onDone}>
        I have saved it
      </button>
    </div>
  );
}
