import type { Principal } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import { BubbleApiError, type BubbleClient } from '../api';
import { navigate, threadPath } from './router';

type Joining = { state: 'joining' } | { state: 'failed'; message: string; retry: boolean } | { state: 'none' };

/**
 * Joins the thread of the invite link this tab opened (kept in storage across the sign-in),
 * then lands in it. The invite is used once: it is forgotten whatever the answer.
 */
export function JoinInvite(props: {
  client: BubbleClient;
  me: Principal;
  token: string | null;
  onDone: () => void;
  onLeave: () => void;
}) {
  const { client, token } = props;
  const [joining, setJoining] = useState<Joining>(token === null ? { state: 'none' } : { state: 'joining' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (token === null) return;
    let cancelled = false;
    setJoining({ state: 'joining' });
    client.acceptInvite(token).then(
      (grant) => {
        props.onDone();
        if (!cancelled) navigate(threadPath(grant.threadId), { replace: true });
      },
      (err: unknown) => {
        // An answer about the invite itself is final; a failure to get one may pass.
        const final =
          err instanceof BubbleApiError && err.status >= 400 && err.status < 500 && err.code !== 'rate_limited';
        if (final) props.onDone();
        if (!cancelled) setJoining({ state: 'failed', message: explain(err, props.me), retry: !final });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [client, token, attempt]);

  return (
    <section class="empty join-invite" aria-labelledby="invite-title">
      {joining.state === 'joining' ? (
        <>
          <h1 id="invite-title">Joining the thread…</h1>
          <p role="status">Using your invite link.</p>
        </>
      ) : (
        <>
          <h1 id="invite-title">This invite link cannot be used</h1>
          <p class="notice-box" role="alert">
            {joining.state === 'failed'
              ? joining.message
              : 'The link is incomplete: open the whole link you were sent.'}
          </p>
          {joining.state === 'failed' && joining.retry && (
            <p>
              <button type="button" class="primary" onClick={() => setAttempt((n) => n + 1)}>
                Try again
              </button>
            </p>
          )}
          <p>
            <a
              href="/"
              onClick={(e) => {
                e.preventDefault();
                props.onLeave();
              }}
            >
              Go to your threads
            </a>
          </p>
        </>
      )}
    </section>
  );
}

function explain(err: unknown, me: Principal): string {
  if (err instanceof BubbleApiError) {
    if (err.code === 'not_found')
      return 'It has expired, has been used as many times as it allows, or was revoked. Ask the person who sent it for a new link.';
    if (err.code === 'forbidden')
      return me.kind === 'bot'
        ? 'Invite links are for people; a bot is added by its owners.'
        : `You may not join with it: ${err.message}`;
    if (err.code === 'invalid_request') return 'The link is damaged: open the whole link you were sent.';
  }
  return `Joining failed: ${(err as Error).message}.`;
}
