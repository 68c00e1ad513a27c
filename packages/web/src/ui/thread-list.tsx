import type { Principal, Thread } from '@bubble/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type BubbleClient, describeError } from '../api';
import { ThreadFeed } from '../model/thread-feed';
import type { ThreadSignals } from '../model/thread-signals';
import { navigate, threadPath } from './router';

interface Row {
  thread: Thread;
  signals: ThreadSignals;
}

/** What the list adds up for the tab's title. */
export interface ListTotals {
  approvals: number;
  unread: number;
}

const NO_SIGNALS: ThreadSignals = { unread: 0, unreadAtLeast: false, approvalsForMe: 0 };

/**
 * Reads each thread's fold just far enough for its signals (`ThreadFeed`): messages unread
 * since the cursor, and approvals waiting for the signed-in person. Each refresh reads only
 * the events a thread gained since the last one.
 */
class ListLoader {
  readonly #feeds = new Map<string, ThreadFeed>();
  readonly #kinds = new Map<string, Promise<boolean>>();
  readonly #bots = new Set<string>();

  constructor(
    readonly client: BubbleClient,
    readonly me: string,
  ) {}

  async load(): Promise<Row[]> {
    const threads = await this.client.listThreads();
    return Promise.all(threads.map((thread) => this.#row(thread)));
  }

  async #row(thread: Thread): Promise<Row> {
    const { client } = this;
    const cursor = await client.getCursor(thread.threadId).catch(() => 0);
    let feed = this.#feeds.get(thread.threadId);
    if (feed === undefined) {
      feed = new ThreadFeed(this.me);
      this.#feeds.set(thread.threadId, feed);
    }
    try {
      await feed.refresh((query) => client.readEvents(thread.threadId, query), thread.headSeq, cursor);
    } catch {
      // Signals stay as last read; the list itself is still right.
    }
    // A request counts only from a bot: ask each requester's kind once.
    await Promise.all(feed.requesters().map((id) => this.#kindOf(id)));
    return { thread, signals: feed.signals(cursor, (id) => this.#bots.has(id)) };
  }

  #kindOf(principalId: string): Promise<boolean> {
    let known = this.#kinds.get(principalId);
    if (known === undefined) {
      known = this.client.getPrincipal(principalId).then(
        (p) => {
          if (p.kind === 'bot') this.#bots.add(principalId);
          return p.kind === 'bot';
        },
        () => {
          this.#kinds.delete(principalId);
          return false;
        },
      );
      this.#kinds.set(principalId, known);
    }
    return known;
  }
}

export function ThreadList(props: {
  client: BubbleClient;
  me: Principal;
  currentThreadId: string | null;
  onTotals?: (totals: ListTotals) => void;
}) {
  const { client, me } = props;
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const onTotals = useRef(props.onTotals);
  onTotals.current = props.onTotals;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loader = new ListLoader(client, me.principalId);
    // One load at a time: a grant change during a poll waits for it, then loads again.
    let running: Promise<void> = Promise.resolve();
    const load = () => {
      running = running.then(async () => {
        if (stopped) return;
        try {
          const next = await loader.load();
          if (!stopped) {
            setRows(next);
            setError(null);
          }
        } catch (err) {
          if (!stopped) setError(describeError(err, 'Could not load your threads', { retrying: true }));
        }
      });
      return running;
    };
    const poll = async () => {
      await load();
      if (!stopped) timer = setTimeout(() => void poll(), 4_000);
    };
    void poll();
    // New grants (someone invited me) show up at once.
    const controller = new AbortController();
    void (async () => {
      try {
        const grants = client.subscribeGrantsAsIterable({ signal: controller.signal });
        for await (const _change of grants) {
          if (stopped) break;
          void load();
        }
      } catch {
        // the status line shows the connection; the poll keeps the list fresh
      }
    })();
    return () => {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
    };
  }, [client, me.principalId]);

  useEffect(() => {
    if (rows === null) return;
    onTotals.current?.({
      approvals: rows.reduce((n, r) => n + r.signals.approvalsForMe, 0),
      unread: rows.reduce((n, r) => n + (r.thread.threadId === props.currentThreadId ? 0 : r.signals.unread), 0),
    });
  }, [rows, props.currentThreadId]);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const { thread } = await client.createThread({
        title: title.trim() === '' ? null : title.trim(),
        key: `web-${crypto.randomUUID()}`,
      });
      setTitle('');
      setRows((r) => [...(r ?? []), { thread, signals: NO_SIGNALS }]);
      navigate(threadPath(thread.threadId));
    } catch (err) {
      setError(describeError(err, 'Could not create the thread'));
    } finally {
      setBusy(false);
    }
  };

  const topLevel = (rows ?? []).filter((r) => r.thread.parentThreadId === null);
  const subs = (rows ?? []).filter((r) => r.thread.parentThreadId !== null);
  return (
    <div class="thread-list">
      <form class="new-thread" onSubmit={create}>
        <label for="new-thread-title">New thread</label>
        <div class="row">
          <input
            id="new-thread-title"
            value={title}
            onInput={(e) => setTitle(e.currentTarget.value)}
            placeholder="Title (optional)"
          />
          <button type="submit" disabled={busy}>
            Create
          </button>
        </div>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {rows === null ? (
        <p role="status">Loading threads…</p>
      ) : (
        <ul aria-label="Your threads">
          {[...topLevel, ...subs].map(({ thread, signals }) => {
            const current = props.currentThreadId === thread.threadId;
            const waiting = signals.approvalsForMe;
            const unread = current ? 0 : signals.unread;
            return (
              <li key={thread.threadId} class={waiting > 0 ? 'waits-for-you' : undefined}>
                <a
                  href={threadPath(thread.threadId)}
                  aria-current={current ? 'page' : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(threadPath(thread.threadId));
                  }}
                >
                  <span class={`title ${unread > 0 ? 'has-unread' : ''}`}>{thread.title ?? thread.threadId}</span>
                  {waiting > 0 && (
                    <span class="approval-mark" data-testid="approval-mark">
                      {waiting === 1 ? 'Approval waiting' : `${waiting} approvals waiting`}
                    </span>
                  )}
                  {unread > 0 && (
                    // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the badge's count alone would read as a bare number
                    <span class="badge" aria-label={`${unread}${signals.unreadAtLeast ? '+' : ''} unread`}>
                      {unread}
                      {signals.unreadAtLeast ? '+' : ''}
                    </span>
                  )}
                </a>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
