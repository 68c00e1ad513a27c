import type { Grant, Principal, Thread } from '@bubble/protocol';
import { noticeText, type RunState, timelineOf } from '@bubble/sdk/client';
import { Fragment } from 'preact';
import { memo } from 'preact/compat';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { type BubbleClient, describeError } from '../api';
import type { ReadEvents } from '../model/event-window';
import { continuedRuns } from '../model/message-groups';
import { callsByRun, callsOf } from '../model/run-props';
import { ThreadModel } from '../model/thread-model';
import { unreadMessages, usageLine, usageOf } from '../model/thread-signals';
import { labelOf, labelParticipants } from '../model/who-is-who';
import { ArtifactsPanel } from './artifacts-panel';
import { type Audience, Composer } from './composer';
import { ParticipantsPanel } from './participants-panel';
import { navigate, threadPath } from './router';
import { RunMessage, type RunActions } from './run-message';
import { useFollow } from './use-follow';

/** How often the participants (and their `online`) are read again while the thread is open. */
const PARTICIPANTS_REFRESH_MS = 10_000;

/** Where the view opens: the first message unread at open (by the cursor), or the newest. */
type Opening = { readonly at: 'newest' } | { readonly at: 'unread'; readonly runId: string };

export function ThreadView(props: { client: BubbleClient; me: Principal; threadId: string }) {
  const { client, me, threadId } = props;
  // Kinds are read when the view renders: a request counts only once its author is known to be a bot.
  const kinds = useRef<ReadonlyMap<string, Principal>>(new Map());
  const model = useMemo(
    () => new ThreadModel(threadId, { isBot: (id) => kinds.current.get(id)?.kind === 'bot' }),
    [threadId],
  );
  const read = useMemo<ReadEvents>(() => (query) => client.readEvents(threadId, query), [client, threadId]);
  const [, setTick] = useState(0);
  const [thread, setThread] = useState<Thread | null>(null);
  const [grants, setGrants] = useState<Grant[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [panel, setPanel] = useState<'none' | 'people' | 'artifacts'>('none');
  const [opening, setOpening] = useState<Opening | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);

  // Older pages: read when the reader nears the top; the position is held across the prepend.
  const loadOlder = () => {
    if (loadingOlder || opening === null || !model.hasOlder) return;
    setLoadingOlder(true);
    model
      .loadOlder(read)
      .catch((err: unknown) => setError(describeError(err, 'Older messages could not be loaded')))
      .finally(() => setLoadingOlder(false));
  };
  const follow = useFollow({ onNearTop: loadOlder });

  useEffect(() => {
    const unsubscribe = model.subscribe(() => setTick((t) => t + 1));
    const controller = new AbortController();
    void (async () => {
      try {
        // The newest page first (back to the first unread message), folded in one go; then live from there.
        // A subthread read through its parent may have no cursor of its own: then nothing is unread.
        const [found, cursor] = await Promise.all([
          client.getThread(threadId),
          client.getCursor(threadId).catch(() => 0),
        ]);
        if (controller.signal.aborted) return;
        setThread(found);
        await model.open(read, { headSeq: found.headSeq, ...(cursor > 0 ? { readTo: cursor + 1 } : {}) });
        if (controller.signal.aborted) return;
        const first = cursor > 0 ? unreadMessages(model.state, cursor, me.principalId)[0] : undefined;
        setOpening(first === undefined ? { at: 'newest' } : { at: 'unread', runId: first.runId });
        // Presence: the participants' `online` says where everyone stands (read below, again after
        // a reconnect by the periodic read); the subscription's `presence` frames say every change.
        for await (const event of client.subscribeThread(threadId, {
          afterSeq: model.lastSeq,
          signal: controller.signal,
          onPresence: (principalId, online) => model.applyPresence({ principalId, online }),
        }))
          model.apply(event);
      } catch (err) {
        if (!controller.signal.aborted) setError(describeError(err, 'This thread could not be loaded'));
      }
    })();
    return () => {
      controller.abort();
      unsubscribe();
      model.dispose();
    };
  }, [client, model, threadId, read, me.principalId]);

  const participantsVersion = model.participantsVersion;
  useEffect(() => {
    let stopped = false;
    const refresh = () =>
      client.listParticipants(threadId).then(
        (list) => {
          if (stopped) return;
          setGrants(list);
          model.setGrants(list);
        },
        () => undefined,
      );
    void refresh();
    const timer = setInterval(() => void refresh(), PARTICIPANTS_REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [client, threadId, participantsVersion, model]);

  // Display names of everyone who wrote or is here; an id stays as it is until its name is known.
  const [people, setPeople] = useState<ReadonlyMap<string, Principal>>(new Map());
  kinds.current = people;
  const state = model.state;
  const authorsKey = useMemo(
    () => [...new Set([...grants.map((g) => g.principalId), ...model.runs.map((r) => r.principalId)])].sort().join(' '),
    // Runs are only ever added, and never change author: the count says when to look again.
    [grants, state.runs.length],
  );
  useEffect(() => {
    let cancelled = false;
    const ids = authorsKey === '' ? [] : authorsKey.split(' ');
    void Promise.all(
      ids.map((id) =>
        client.getPrincipal(id).then(
          (p) => [id, p] as const,
          () => null,
        ),
      ),
    ).then((pairs) => {
      if (!cancelled) setPeople(new Map(pairs.filter((p) => p !== null)));
    });
    return () => {
      cancelled = true;
    };
  }, [client, authorsKey]);

  // The cursor is a receipt of what was shown; unread counts in the list come from it.
  // Stored at most every 400 ms while events land, and at once when the view closes.
  const lastSeq = model.lastSeq;
  const cursor = useRef({ shown: 0, stored: 0 });
  const storeCursor = () => {
    const { shown, stored } = cursor.current;
    if (shown <= stored) return;
    cursor.current.stored = shown;
    void client.putCursor(threadId, shown).catch(() => undefined);
  };
  useEffect(() => {
    if (opening === null) return;
    cursor.current.shown = lastSeq;
    const timer = setTimeout(storeCursor, 400);
    return () => clearTimeout(timer);
  }, [client, threadId, lastSeq, opening]);
  useEffect(() => () => storeCursor(), [client, threadId]);

  // Opened: at the first unread message when there is one (and the rest does not fit below it), else at the newest.
  useLayoutEffect(() => {
    if (opening === null) return;
    const el = follow.scrollRef.current;
    const mark = el?.querySelector<HTMLElement>('.unread-divider');
    if (el === null || opening.at === 'newest' || mark === null || mark === undefined) {
      follow.toBottom();
      return;
    }
    const top = mark.getBoundingClientRect().top - el.getBoundingClientRect().top + el.scrollTop;
    if (el.scrollHeight - top <= el.clientHeight) follow.toBottom();
    else follow.holdAt(top);
  }, [opening]);

  // An older page put in front keeps what the reader looks at in place (`useFollow`'s anchor).
  const firstSeq = model.firstSeq;
  // A window shorter than the screen cannot be scrolled up: read older pages until it fills it.
  useEffect(() => {
    const el = follow.scrollRef.current;
    if (opening !== null && !loadingOlder && el !== null && model.hasOlder && el.scrollHeight <= el.clientHeight)
      loadOlder();
  }, [opening, loadingOlder, firstSeq]);

  // Names as shown here: a bot badge on every bot, and the id of anyone whose name another participant shares.
  const labels = useMemo(
    () => labelParticipants([me, ...[...people.values()].filter((p) => p.principalId !== me.principalId)]),
    [people, me],
  );

  // Titles of the threads approval cards name, each read once.
  const titles = useRef(new Map<string, Promise<string | null>>());
  const myGrant = grants.find((g) => g.principalId === me.principalId);
  const canWrite = myGrant !== undefined;
  // One object while names and rights stay the same, so unchanged messages are not drawn again;
  // every read goes to the model's current state when called.
  const actions = useMemo<RunActions>(
    () => ({
      canApprove: (toolCallId) => model.mayApprove(toolCallId, me.principalId),
      canWrite,
      approval: (id) => model.approval(id),
      waitingRequest: (id) => model.waitingRequest(id),
      subagentRequests: (runId) => model.subagentRequests(runId),
      answer: async (toolCallId, decision, reason) => {
        try {
          await client.appendEvent(threadId, {
            type: 'tool_call_approval',
            data: { toolCallId, decision, ...(reason ? { reason } : {}) },
          });
          setError(null);
        } catch (err) {
          setError(describeError(err, 'Your answer was not recorded'));
        }
      },
      stop: async (runId) => {
        try {
          await client.appendEvent(threadId, {
            type: 'run_interrupt_requested',
            data: { runId, reason: `${me.principalId} pressed Stop` },
          });
          setError(null);
        } catch (err) {
          setError(describeError(err, 'Stop was not recorded'));
        }
      },
      nameOf: (id) => labelOf(labels, id).text,
      labelOf: (id) => labelOf(labels, id),
      threadId,
      threadTitle: (id) => {
        let title = titles.current.get(id);
        if (title === undefined) {
          title = client.getThread(id).then(
            (t) => (t.title === null || t.title.trim() === '' ? null : t.title),
            () => null,
          );
          titles.current.set(id, title);
        }
        return title;
      },
    }),
    [model, client, threadId, me, labels, canWrite],
  );
  const calls = useMemo(() => callsByRun(state), [state.toolCalls]);
  const total = useMemo(() => usageOf(model.runs), [state.runs]);

  // Messages that landed below while the reader was scrolled up.
  const seenSeq = useRef(0);
  const items = timelineOf(state);
  // Who wrote and when is fixed when a run starts, so the grouping changes only with the timeline.
  const continued = useMemo(() => continuedRuns(items, (id) => model.run(id)), [state.timeline]);
  const lastItemSeq = items[items.length - 1]?.seq ?? 0;
  if (follow.atBottom) seenSeq.current = lastItemSeq;
  const newMessages = follow.atBottom
    ? 0
    : items.filter(
        (item) =>
          item.kind === 'run' && item.seq > seenSeq.current && model.run(item.runId)?.principalId !== me.principalId,
      ).length;

  const audience = useMemo<Audience>(() => {
    const others = grants.filter((g) => g.principalId !== me.principalId);
    const isBot = (id: string) => people.get(id)?.kind === 'bot';
    return {
      people: others.filter((g) => !isBot(g.principalId)).map((g) => labelOf(labels, g.principalId).text),
      bots: others
        .filter((g) => isBot(g.principalId))
        .map((g) => ({
          id: g.principalId,
          name: labelOf(labels, g.principalId).text,
          online: g.principalId in state.presence ? state.presence[g.principalId] : undefined,
        })),
    };
  }, [grants, people, labels, state.presence, me.principalId]);

  const unreadRunId = opening?.at === 'unread' ? opening.runId : undefined;
  return (
    <section class="thread" aria-labelledby="thread-title">
      <header class="thread-head">
        {thread?.parentThreadId && (
          <a
            href={threadPath(thread.parentThreadId)}
            onClick={(e) => {
              e.preventDefault();
              navigate(threadPath(thread.parentThreadId!));
            }}
          >
            ← Parent thread
          </a>
        )}
        <h1 id="thread-title">{thread?.title ?? threadId}</h1>
        {total !== undefined && (
          <span
            class="meta thread-usage"
            data-testid="thread-usage"
            title={`What the bots used on this thread${model.hasOlder ? ' (in the messages loaded so far)' : ''}`}
          >
            {model.hasOlder ? 'at least ' : ''}
            {usageLine(total)}
          </span>
        )}
        <div class="thread-tools">
          <button
            type="button"
            aria-expanded={panel === 'people'}
            onClick={() => setPanel(panel === 'people' ? 'none' : 'people')}
          >
            People ({grants.length})
          </button>
          <button
            type="button"
            aria-expanded={panel === 'artifacts'}
            onClick={() => setPanel(panel === 'artifacts' ? 'none' : 'artifacts')}
          >
            Artifacts
          </button>
        </div>
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="thread-body">
        <div class="timeline-frame">
          <div
            class="timeline"
            ref={follow.scrollRef}
            role="log"
            aria-live="polite"
            aria-label="Messages"
            aria-busy={opening === null}
            // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to scroll it
            tabIndex={0}
            onScroll={follow.onScroll}
          >
            {/* Outside the content: the reader's anchor is always a message, never this note. */}
            {opening === null ? (
              <p class="notice" role="status">
                Loading messages…
              </p>
            ) : model.hasOlder ? (
              <p class="notice older-note">
                {loadingOlder ? 'Loading older messages…' : 'Scroll up for older messages'}
              </p>
            ) : null}
            <div class="timeline-content" ref={follow.contentRef}>
              {items.map((item) => {
                if (item.kind === 'notice') {
                  return (
                    <p key={`n${item.seq}`} class="notice">
                      {noticeText(item.notice)}
                    </p>
                  );
                }
                const run = model.run(item.runId)!;
                return (
                  <Fragment key={item.runId}>
                    {item.runId === unreadRunId && (
                      // biome-ignore lint/a11y/useSemanticElements: the divider carries a word ("New"), which an <hr> cannot hold
                      <div class="unread-divider" role="separator" aria-label="New messages since you last read">
                        <span>New</span>
                      </div>
                    )}
                    <RunMessage
                      run={run}
                      mine={run.principalId === me.principalId}
                      calls={callsOf(calls, run.runId)}
                      participants={state.participants}
                      actions={actions}
                      continued={continued.has(item.runId) && item.runId !== unreadRunId}
                    />
                    <RunUsage run={run} />
                  </Fragment>
                );
              })}
            </div>
          </div>
          {!follow.atBottom && opening !== null && (
            <button
              type="button"
              class={`jump-latest ${newMessages > 0 ? 'has-new' : ''}`}
              data-testid="jump-latest"
              onClick={() => follow.toBottom('smooth')}
            >
              {newMessages > 0
                ? `${newMessages} new ${newMessages === 1 ? 'message' : 'messages'} ↓`
                : 'Jump to latest ↓'}
            </button>
          )}
        </div>
        {panel === 'people' && (
          <ParticipantsPanel
            client={client}
            me={me}
            threadId={threadId}
            grants={grants}
            labels={labels}
            presence={state.presence}
            onChanged={() => client.listParticipants(threadId).then(setGrants, () => undefined)}
          />
        )}
        {panel === 'artifacts' && (
          <ArtifactsPanel
            client={client}
            threadId={threadId}
            version={model.artifactsVersion}
            labelOf={(id) => labelOf(labels, id)}
          />
        )}
      </div>
      {myGrant ? (
        <Composer client={client} threadId={threadId} audience={audience} onSending={() => follow.toBottom()} />
      ) : (
        <p class="meta composer-note">You can read this thread through its parent; only its participants write here.</p>
      )}
    </section>
  );
}

/** What a run used, from its `run_finished.usage`: one quiet line under the message. */
const RunUsage = memo(function RunUsage(props: { run: RunState }) {
  const summary = props.run.usage === undefined ? undefined : usageOf([props.run]);
  if (summary === undefined) return null;
  return (
    <p class="run-usage meta" data-testid="run-usage">
      {usageLine(summary)}
    </p>
  );
});
