import type { Principal, Thread } from '@bubble/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type BubbleClient, describeError } from '../api';
import { scubaConfigSnippet } from '../model/scuba-config';

interface TokenRow {
  tokenId: string;
  createdAt: string;
}

/** Bots the signed-in person owns: create, tokens (shown once), add to a thread. */
export function BotsPage(props: { client: BubbleClient; me: Principal }) {
  const { client, me } = props;
  const [bots, setBots] = useState<Principal[] | null>(null);
  const [threads, setThreads] = useState<Thread[]>([]);
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<{ principalId: string; token: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  const reload = () =>
    client.searchPrincipals({ query: '', limit: 1000 }).then(
      (all) => setBots(all.filter((p) => p.kind === 'bot' && p.ownerPrincipalIds.includes(me.principalId))),
      (err: unknown) => setMessage(describeError(err, 'Could not load your bots')),
    );
  useEffect(() => {
    void reload();
    client.listThreads().then(setThreads, () => undefined);
  }, [client]);

  const create = async (e: Event) => {
    e.preventDefault();
    try {
      const { principal, token } = await client.createBot({
        principalId: id.trim(),
        ...(name.trim() ? { displayName: name.trim() } : {}),
      });
      setFresh({ principalId: principal.principalId, token: token.token ?? '' });
      setId('');
      setName('');
      setMessage(null);
      void reload();
    } catch (err) {
      setMessage(describeError(err, 'Could not create the bot'));
    }
  };

  return (
    <section class="bots" aria-labelledby="bots-title">
      <h1 id="bots-title">Your bots</h1>
      <form class="card" onSubmit={create}>
        <h2>Create a bot</h2>
        <label for="bot-id">Bot id (lowercase letters, digits, . _ -)</label>
        <input
          id="bot-id"
          value={id}
          required
          pattern="[a-z0-9][a-z0-9._\-]{1,63}"
          onInput={(e) => setId(e.currentTarget.value)}
        />
        <label for="bot-name">Display name (optional)</label>
        <input id="bot-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit">Create bot</button>
      </form>
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      {fresh && <FreshToken principalId={fresh.principalId} token={fresh.token} onDone={() => setFresh(null)} />}
      {bots === null ? (
        <p role="status">Loading…</p>
      ) : bots.length === 0 ? (
        <p class="meta">You own no bots yet.</p>
      ) : (
        bots.map((bot) => (
          <BotCard
            key={bot.principalId}
            client={client}
            bot={bot}
            threads={threads}
            onToken={(token) => setFresh({ principalId: bot.principalId, token })}
          />
        ))
      )}
    </section>
  );
}

function FreshToken(props: { principalId: string; token: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const snippet = scubaConfigSnippet(window.location.origin, props.principalId);
  const copy = async (what: string, text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(what);
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section class="card fresh-token" aria-label={`New token for ${props.principalId}`}>
      <h2>Token for {props.principalId}</h2>
      <p>This is the only time the token is shown. Copy it now.</p>
      <label for="fresh-token-value">Token</label>
      <div class="row">
        <input
          id="fresh-token-value"
          readOnly
          value={props.token}
          data-testid="fresh-token"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy('token', props.token)}>
          Copy token
        </button>
      </div>
      <p>
        Save this as <code>scuba.json</code> and start the bot with{' '}
        <code>BUBBLE_BOT_TOKEN=… npx claude-scuba --config scuba.json</code>:
      </p>
      <pre class="snippet">{snippet}</pre>
      <button type="button" onClick={() => void copy('config', snippet)}>
        Copy config
      </button>
      {copied && (
        <span role="status">
          {copied === 'failed' ? ' Copy failed: select the text instead.' : ` Copied the ${copied}.`}
        </span>
      )}
      <p>
        <button type="button" onClick={props.onDone}>
          I have saved it
        </button>
      </p>
    </section>
  );
}

function BotCard(props: { client: BubbleClient; bot: Principal; threads: Thread[]; onToken: (token: string) => void }) {
  const { client } = props;
  const [bot, setBot] = useState(props.bot);
  const [tokens, setTokens] = useState<TokenRow[] | null>(null);
  const [threadId, setThreadId] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const reload = () =>
    client.listTokens(bot.principalId).then(
      (t) => setTokens(t.map((x) => ({ tokenId: x.tokenId, createdAt: x.createdAt }))),
      () => setTokens([]),
    );
  useEffect(() => {
    void reload();
  }, [client, bot.principalId]);
  // The token whose revocation waits for a second, explicit "yes": whatever runs with it stops at once.
  const [confirming, setConfirming] = useState<string | null>(null);
  const act = async (what: () => Promise<unknown>, done: string, failed = 'That did not work') => {
    try {
      await what();
      setStatus(done);
      void reload();
    } catch (err) {
      setStatus(describeError(err, failed));
    }
  };
  const selectId = `add-${bot.principalId}`;
  const joinable = bot.joinableBy ?? 'owners';
  const setJoinable = (joinableBy: 'owners' | 'anyone') =>
    void act(
      async () => setBot(await client.updatePrincipal(bot.principalId, { joinableBy })),
      joinableBy === 'anyone'
        ? `Anyone on a thread may now add ${bot.principalId}.`
        : `Only you and its other owners may add ${bot.principalId} now.`,
    );
  return (
    <article class="card bot" aria-label={`Bot ${bot.principalId}`}>
      <h2>
        {bot.displayName} <span class="meta">({bot.principalId})</span>
      </h2>
      <fieldset class="joinable">
        <legend>Who may add this bot to a thread</legend>
        <label>
          <input
            type="radio"
            name={`joinable-${bot.principalId}`}
            value="owners"
            checked={joinable === 'owners'}
            onChange={() => setJoinable('owners')}
          />{' '}
          Only its owners
          <span class="meta"> (recommended)</span>
        </label>
        <label>
          <input
            type="radio"
            name={`joinable-${bot.principalId}`}
            value="anyone"
            checked={joinable === 'anyone'}
            onChange={() => setJoinable('anyone')}
          />{' '}
          Anyone on a thread
        </label>
        <p class="meta">
          The bot works, and spends, on its owners' behalf wherever it is added. Wherever it is, only its owners can
          approve the tools it wants to run, and they must be on that thread to do so.
        </p>
      </fieldset>
      <h3>Tokens</h3>
      <ul>
        {(tokens ?? []).map((t) => (
          <li key={t.tokenId} data-token-id={t.tokenId}>
            <code>{t.tokenId}</code> <span class="meta">created {new Date(t.createdAt).toLocaleString()}</span>{' '}
            {confirming === t.tokenId ? (
              <ConfirmRevoke
                tokenId={t.tokenId}
                botId={bot.principalId}
                onCancel={() => setConfirming(null)}
                onConfirm={() => {
                  setConfirming(null);
                  void act(
                    () => client.revokeToken(bot.principalId, t.tokenId),
                    `Revoked ${t.tokenId}.`,
                    `Could not revoke ${t.tokenId}`,
                  );
                }}
              />
            ) : (
              <button
                type="button"
                class="danger"
                aria-label={`Revoke ${t.tokenId}`}
                onClick={() => {
                  setStatus(null);
                  setConfirming(t.tokenId);
                }}
              >
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
      <button
        type="button"
        onClick={() =>
          void act(async () => {
            const token = await client.mintToken(bot.principalId);
            props.onToken(token.token ?? '');
          }, 'Minted a new token.')
        }
      >
        Mint a token
      </button>
      <div class="row">
        <label for={selectId}>Add to thread</label>
        <select id={selectId} value={threadId} onChange={(e) => setThreadId(e.currentTarget.value)}>
          <option value="">Choose a thread…</option>
          {props.threads.map((t) => (
            <option key={t.threadId} value={t.threadId}>
              {t.title ?? t.threadId}
            </option>
          ))}
        </select>
        <button
          type="button"
          disabled={threadId === ''}
          onClick={() =>
            void act(
              () => client.addParticipant(threadId, bot.principalId, 'member'),
              `Added ${bot.principalId} to the thread.`,
            )
          }
        >
          Add
        </button>
      </div>
      {status && <p role="status">{status}</p>}
    </article>
  );
}

/** The second step of revoking a bot's token: what it does, and Cancel first in focus (the safe answer). */
function ConfirmRevoke(props: { tokenId: string; botId: string; onConfirm: () => void; onCancel: () => void }) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  return (
    // biome-ignore lint/a11y/useSemanticElements: a question with two answers, not a form to fill
    <span class="confirm-revoke" role="group" aria-label={`Revoke ${props.tokenId}?`}>
      <span class="confirm-text">
        Revoke {props.tokenId}? Whatever runs as {props.botId} with it is signed out at once, and stops answering until
        it is given a new token.
      </span>{' '}
      <button type="button" class="danger" onClick={props.onConfirm}>
        Yes, revoke it
      </button>{' '}
      <button type="button" ref={cancel} onClick={props.onCancel}>
        Cancel
      </button>
    </span>
  );
}
