import type { Grant, Principal } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import { navigate } from './router';

/** Who is on the thread and with which role; invite people and bots (search); leave. */
export function ParticipantsPanel(props: { client: BubbleClient; me: Principal; threadId: string; grants: Grant[]; onChanged: () => void }) {
  const { client, threadId } = props;
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
  const invite = async (principalId: string) => {
    try {
      await client.addParticipant(threadId, principalId, 'member');
      setMessage(`${principalId} was added.`);
      props.onChanged();
    } catch (err) {
      setMessage(`Could not add ${principalId}: ${(err as Error).message}`);
    }
  };
  const leave = async () => {
    if (!window.confirm('Leave this thread?')) return;
    try {
      await client.removeParticipant(threadId, props.me.principalId);
      navigate('/');
    } catch (err) {
      setMessage(`Could not leave: ${(err as Error).message}`);
    }
  };
  const candidates = found.filter((p) => !onThread.has(p.principalId));
  const exact = query.trim();
  return (
    <aside class="panel" aria-label="People on this thread">
      <h2>People</h2>
      <ul class="people">
        {props.grants.map((g) => (
          <li key={g.principalId}>
            <span>{g.principalId}</span> <span class="role">{g.role}</span>
          </li>
        ))}
      </ul>
      <label for="invite-search">Invite a person or bot</label>
      <input id="invite-search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="Search by id or name" />
      <ul class="candidates" aria-label="Search results">
        {candidates.map((p) => (
          <li key={p.principalId}>
            <span>
              {p.displayName} <span class="meta">({p.principalId}, {p.kind})</span>
            </span>
            <button type="button" onClick={() => void invite(p.principalId)}>
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
