import type { OidcInfo } from '@bubble/protocol';
import { useState } from 'preact/hooks';
import { isUserToken } from '../api';

export type OidcAvailability =
  | { readonly state: 'loading' }
  | { readonly state: 'none' }
  | { readonly state: 'available'; readonly config: OidcInfo }
  | { readonly state: 'unreachable'; readonly message: string };

/** The host people recognise their provider by ("example.eu.auth0.com"). */
export function issuerHost(issuer: string): string {
  try {
    return new URL(issuer).host;
  } catch {
    return issuer;
  }
}

/**
 * Sign in: with the server's identity provider when it has one (the main way), and always with a
 * Bubble token (a sign-in link, or one pasted). An invite waiting for sign-in says so first.
 */
export function SignIn(props: {
  notice: string | null;
  oidc: OidcAvailability;
  invited: boolean;
  onToken: (token: string) => void;
  onOidc: () => Promise<void>;
}) {
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [leaving, setLeaving] = useState(false);
  const oidc = props.oidc.state === 'available' ? props.oidc.config : null;
  const startOidc = async () => {
    setLeaving(true);
    setProblem(null);
    try {
      await props.onOidc();
    } catch (err) {
      setLeaving(false);
      setProblem(
        `Could not reach ${oidc ? issuerHost(oidc.issuer) : 'the identity provider'}: ${(err as Error).message}`,
      );
    }
  };
  return (
    <main class="center">
      <div class="card signin">
        {props.invited ? (
          <>
            <h1>You are invited to a thread</h1>
            <p>Sign in to Bubble and you join it at once.</p>
          </>
        ) : (
          <h1>Sign in to Bubble</h1>
        )}
        {props.notice && (
          <p class="notice-box" role="alert">
            {props.notice}
          </p>
        )}
        {oidc && (
          <div class="oidc">
            <button type="button" class="primary wide" disabled={leaving} onClick={() => void startOidc()}>
              {leaving ? 'Opening the sign-in page…' : `Sign in with ${issuerHost(oidc.issuer)}`}
            </button>
          </div>
        )}
        {props.oidc.state === 'unreachable' && <p class="meta">{props.oidc.message}</p>}
        <form
          class={oidc ? 'token-form secondary' : 'token-form'}
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
          {oidc ? (
            <p class="meta or">Or use a Bubble token: open the sign-in link you were given, or paste the token.</p>
          ) : (
            <p>Open the sign-in link that the server printed, or paste your token.</p>
          )}
          <label for="token">Your token</label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            placeholder="bubble_user_…"
          />
          {problem && (
            <p class="error" role="alert">
              {problem}
            </p>
          )}
          <button type="submit" class={oidc ? '' : 'primary'}>
            Continue with token
          </button>
        </form>
      </div>
    </main>
  );
}
