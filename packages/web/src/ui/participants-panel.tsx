import type { Grant, Principal } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import { type BubbleClient, describeError } from '../api';
import { labelOf, labelParticipants, type PrincipalLabel } from '../model/who-is-who';
import { InvitesSection } from './invites-section';
import { Avatar, PrincipalName } from './principal-name';
import { navigate } from './router';

/**
 * Who is on the thread (name, bot badge, id, role), invite links for owners, adding
 * people and bots by search (or exact id), and leaving.
 */
export function ParticipantsPanel(props: {
  client: BubbleClient;
  me: Principal;
  threadId: string;
  grants: Grant[];
  labels: ReadonlyMap<string, PrincipalLabel>;
  /** Who is online (protocol.md: participants' `online`, `presence` frames); absent while unknown. */
  presence: Readonly<Record<string, boolean>>;
  onChanged: () => void;
}) {
  const { client, threadId, labels } = props;
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<Principal[]>([]);
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    const timer = setTimeout(() => {
      client.searchPrincipals({ query: query.trim(), limit: 20 }).then(setFound, () => setFound([]));
    }, 150);
    return () => clearTimeout(timer);
  }, [client, query]);

  const onThread = new Set(props.grants.map((g) => g.principalId));
  const amOwner = props.grants.some((g) => g.principalId === props.me.principalId && g.role === 'owner');
  const invite = async (principalId: string) => {
    try {
      const added = await client.addParticipant(threadId, principalId, 'member');
      setMessage(
        added.status === 'pending'
          ? `${principalId} was invited (pending): they are added once they accept.`
          : `${principalId} was added.`,
      );
      props.onChanged();
    } catch (err) {
      setMessage(describeError(err, `Could not add ${principalId}`));
    }
  };
  const leave = async () => {
    if (!window.confirm('Leave this thread?')) return;
    try {
      await client.removeParticipant(threadId, props.me.principalId);
      navigate('/');
    } catch (err) {
      setMessage(describeError(err, 'Could not leave'));
    }
  };
  const candidates = found.filter((p) => !onThread.has(p.principalId));
  // A candidate is labelled among the thread's participants: a name it shares with one shows its id.
  const candidateLabels = labelParticipants([
    ...props.grants
      .map((g) => labels.get(g.principalId))
      .filter((l) => l !== undefined)
      .map(toPrincipalLike),
    ...candidates,
  ]);
  const exact = query.trim();
  return (
    <aside class="panel" aria-label="People on this thread">
      <h2>People</h2>
      <ul class="people">
        {props.grants.map((g) => {
          const label = labelOf(labels, g.principalId);
          return (
            <li key={g.principalId} data-principal-id={g.principalId}>
              <span class="presence-holder">
                <Avatar label={label} size="small" />
                <PresenceDot
                  online={Object.hasOwn(props.presence, g.principalId) ? props.presence[g.principalId] : undefined}
                />
              </span>
              <PrincipalName label={label} alwaysId />
              <span class="role">{g.role}</span>
            </li>
          );
        })}
      </ul>
      {amOwner && <InvitesSection client={client} threadId={threadId} labelOf={(id) => labelOf(labels, id)} />}
      <label for="invite-search" class="section-label">
        Invite a person or bot
      </label>
      <input
        id="invite-search"
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        placeholder="Search by id or name"
      />
      <ul class="candidates" aria-label="Search results">
        {candidates.map((p) => (
          <li key={p.principalId}>
            <PrincipalName label={labelOf(candidateLabels, p.principalId)} alwaysId />
            <button type="button" onClick={() => void invite(p.principalId)} aria-label={`Add ${p.principalId}`}>
              Add
            </button>
          </li>
        ))}
        {exact !== '' && !candidates.some((p) => p.principalId === exact) && !onThread.has(exact) && (
          <li>
            <span class="meta">Add by exact id</span>
            <button type="button" onClick={() => void invite(exact)}>
              Add {exact}
            </button>
          </li>
        )}
      </ul>
      {message && <p role="status">{message}</p>}
      <button type="button" class="danger" onClick={() => void leave()}>
        Leave thread
      </button>
    </aside>
  );
}

/** A dot on the avatar: green when online, hollow grey when offline, nothing while the server has not said. */
export function PresenceDot(props: { online: boolean | undefined }) {
  if (props.online === undefined) return null;
  return (
    <span
      class={`presence-dot ${props.online ? 'is-online' : 'is-offline'}`}
      data-testid="presence"
      data-online={String(props.online)}
      role="img"
      aria-label={props.online ? 'online' : 'offline'}
      title={props.online ? 'Online' : 'Offline'}
    />
  );
}

function toPrincipalLike(label: PrincipalLabel): Pick<Principal, 'principalId' | 'displayName' | 'kind'> {
  return { principalId: label.principalId, displayName: label.displayName, kind: label.isBot ? 'bot' : 'human' };
}
