import type { Principal, Thread } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import { navigate, threadPath } from './router';

interface Row {
  thread: Thread;
  unread: number;
}

/** Unread = events above the stored cursor (the cursor is a receipt the thread view moves). */
async function loadRows(client: BubbleClient): Promise<Row[]> {
  const threads = await client.listThreads();
  return Promise.all(
    threads.map(async (thread) => {
      const cursor = await client.getCursor(thread.threadId).catch(() => 0);
      return { thread, unread: Math.max(0, thread.headSeq - cursor) };
    }),
  );
}

export function ThreadList(props: { client: BubbleClient; me: Principal; currentThreadId: string | null }) {
  const { client } = props;
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const refresh = async () => {
      try {
        const next = await loadRows(client);
        if (!stopped) {
          setRows(next);
          setError(null);
        }
      } catch (err) {
        if (!stopped) setError(`Could not load threads: ${(err as Error).message}`);
      }
      if (!stopped) timer = setTimeout(() => void refresh(), 4_000);
    };
    void refresh();
    // New grants (someone invited me) show up at once.
    const controller = new AbortController();
    void (async () => {
      try {
        const grants = client.subscribeGrantsAsIterable({ signal: controller.signal });
        for await (const _change of grants) {
          if (stopped) break;
          const next = await loadRows(client).catch(() => null);
          if (next && !stopped) setRows(next);
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
  }, [client]);

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const { thread } = await client.createThread({
        title: title.trim() === '' ? null : title.trim(),
        key: `web-${crypto.randomUUID()}`,
      });
      setTitle('');
      setRows((r) => [...(r ?? []), { thread, unread: 0 }]);
      navigate(threadPath(thread.threadId));
    } catch (err) {
      setError(`Could not create the thread: ${(err as Error).message}`);
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
          {[...topLevel, ...subs].map(({ thread, unread }) => (
            <li key={thread.threadId}>
              <a
                href={threadPath(thread.threadId)}
                aria-current={props.currentThreadId === thread.threadId ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  navigate(threadPath(thread.threadId));
                }}
              >
                <span class="title">{thread.title ?? thread.threadId}</span>
                {unread > 0 && props.currentThreadId !== thread.threadId && (
                  // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the badge's count alone would read as a bare number
                  <span class="badge" aria-label={`${unread} unread`}>
                    {unread}
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
