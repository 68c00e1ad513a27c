import type { Invitation } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import { BubbleApiError, type BubbleClient, describeError } from '../api';
import { navigate, threadPath } from './router';

/** How often the list asks for new invitations (they come as no event on any thread the person can read). */
const POLL_MS = 10_000;

/**
 * The signed-in person's pending invitations (protocol.md, Consent): someone who could not see them
 * added them to a thread, and nothing happens until they accept here. The inviter is shown by id,
 * since nobody on that thread is known to the invitee yet; a title is the inviter's text, shown as
 * text. Nothing shows while there are none.
 */
export function InvitationsList(props: { client: BubbleClient }) {
  const { client } = props;
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const next = await client.listInvitations();
        if (!stopped) setInvitations(next);
      } catch {
        // The thread list says when the server cannot be reached; the next poll tries again.
      }
      if (!stopped) timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [client]);

  const drop = (threadId: string) => setInvitations((list) => list.filter((i) => i.threadId !== threadId));
  const answer = async (invitation: Invitation, accept: boolean) => {
    const name = invitation.title ?? 'the thread';
    setBusy(invitation.threadId);
    setMessage(null);
    try {
      if (accept) await client.acceptInvitation(invitation.threadId);
      else await client.declineInvitation(invitation.threadId);
      drop(invitation.threadId);
      if (accept) navigate(threadPath(invitation.threadId));
      else setMessage(`You declined the invitation to ${name}.`);
    } catch (err) {
      if (err instanceof BubbleApiError && err.status === 404) {
        drop(invitation.threadId);
        setMessage(`The invitation to ${name} is no longer open.`);
      } else {
        setMessage(describeError(err, accept ? `Could not accept the invitation to ${name}` : 'Could not decline'));
      }
    } finally {
      setBusy(null);
    }
  };

  if (invitations.length === 0 && message === null) return null;
  return (
    <section class="invitations" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      {message !== null && (
        <p class="meta" role="status">
          {message}
        </p>
      )}
      <ul aria-label="Invitations">
        {invitations.map((invitation) => (
          <li key={invitation.threadId} data-thread-id={invitation.threadId}>
            <p class="invitation-what">
              <strong>{invitation.title ?? 'Untitled thread'}</strong>
              <span class="meta">
                {' '}
                from <code>{invitation.invitedBy}</code>, as {invitation.role}
              </span>
            </p>
            <div class="row">
              <button
                type="button"
                class="primary"
                disabled={busy !== null}
                onClick={() => void answer(invitation, true)}
                aria-label={`Accept the invitation to ${invitation.title ?? 'an untitled thread'} from ${invitation.invitedBy}`}
              >
                Accept
              </button>
              <button
                type="button"
                disabled={busy !== null}
                onClick={() => void answer(invitation, false)}
                aria-label={`Decline the invitation to ${invitation.title ?? 'an untitled thread'} from ${invitation.invitedBy}`}
              >
                Decline
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
