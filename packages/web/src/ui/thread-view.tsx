import { assertNever, type Grant, type Principal, type Thread } from '@bubble/protocol';
import { type ThreadNotice, timelineOf } from '@bubble/sdk/client';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import { callsByRun, callsOf } from '../model/run-props';
import { ThreadModel } from '../model/thread-model';
import { labelOf, labelParticipants } from '../model/who-is-who';
import { ArtifactsPanel } from './artifacts-panel';
import { Composer } from './composer';
import { ParticipantsPanel } from './participants-panel';
import { navigate, threadPath } from './router';
import { RunMessage, type RunActions } from './run-message';

export function ThreadView(props: { client: BubbleClient; me: Principal; threadId: string }) {
  const { client, me, threadId } = props;
  // Kinds are read when the view renders: a request counts only once its author is known to be a bot.
  const kinds = useRef<ReadonlyMap<string, Principal>>(new Map());
  const model = useMemo(
    () => new ThreadModel(threadId, { isBot: (id) => kinds.current.get(id)?.kind === 'bot' }),
    [threadId],
  );
  const [, setTick] = useState(0);
  const [thread, setThread] = useState<Thread | null>(null);
  const [grants, setGrants] = useState<Grant[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [panel, setPanel] = useState<'none' | 'people' | 'artifacts'>('none');
  const timeline = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    const unsubscribe = model.subscribe(() => setTick((t) => t + 1));
    const controller = new AbortController();
    void (async () => {
      try {
        for await (const event of client.subscribeThread(threadId, { afterSeq: 0, signal: controller.signal }))
          model.apply(event);
      } catch (err) {
        if (!controller.signal.aborted) setError(`This thread cannot be followed: ${(err as Error).message}`);
      }
    })();
    client
      .getThread(threadId)
      .then(setThread, (err: unknown) => setError(`This thread cannot be opened: ${(err as Error).message}`));
    return () => {
      controller.abort();
      unsubscribe();
      model.dispose();
    };
  }, [client, model, threadId]);

  const participantsVersion = model.participantsVersion;
  useEffect(() => {
    client.listParticipants(threadId).then(setGrants, () => undefined);
  }, [client, threadId, participantsVersion]);

  // Display names of everyone who wrote or is here; an id stays as it is until its name is known.
  const [people, setPeople] = useState<ReadonlyMap<string, Principal>>(new Map());
  kinds.current = people;
  const authors = [...new Set([...grants.map((g) => g.principalId), ...model.runs.map((r) => r.principalId)])]
    .sort()
    .join(' ');
  useEffect(() => {
    let cancelled = false;
    const ids = authors === '' ? [] : authors.split(' ');
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
  }, [client, authors]);

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
    cursor.current.shown = lastSeq;
    const timer = setTimeout(storeCursor, 400);
    return () => clearTimeout(timer);
  }, [client, threadId, lastSeq]);
  useEffect(() => () => storeCursor(), [client, threadId]);

  useEffect(() => {
    const el = timeline.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  // Names as shown here: a bot badge on every bot, and the id of anyone whose name another participant shares.
  const labels = useMemo(
    () => labelParticipants([me, ...[...people.values()].filter((p) => p.principalId !== me.principalId)]),
    [people, me],
  );

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
        } catch (err) {
          setError(`Your answer was not recorded: ${(err as Error).message}`);
        }
      },
      stop: async (runId) => {
        try {
          await client.appendEvent(threadId, {
            type: 'run_interrupt_requested',
            data: { runId, reason: `${me.principalId} pressed Stop` },
          });
        } catch (err) {
          setError(`Stop was not recorded: ${(err as Error).message}`);
        }
      },
      nameOf: (id) => labelOf(labels, id).text,
      labelOf: (id) => labelOf(labels, id),
    }),
    [model, client, threadId, me, labels, canWrite],
  );
  const state = model.state;
  const calls = useMemo(() => callsByRun(state), [state.toolCalls]);

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
        <div
          class="timeline"
          ref={timeline}
          role="log"
          aria-live="polite"
          aria-label="Messages"
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard to scroll it
          tabIndex={0}
          onScroll={(e) => {
            const el = e.currentTarget;
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
          }}
        >
          {timelineOf(state).map((item) => {
            if (item.kind === 'notice') {
              return (
                <p key={`n${item.seq}`} class="notice">
                  {noticeText(item.notice)}
                </p>
              );
            }
            const run = model.run(item.runId)!;
            return (
              <RunMessage
                key={item.runId}
                run={run}
                mine={run.principalId === me.principalId}
                calls={callsOf(calls, run.runId)}
                participants={state.participants}
                actions={actions}
              />
            );
          })}
        </div>
        {panel === 'people' && (
          <ParticipantsPanel
            client={client}
            me={me}
            threadId={threadId}
            grants={grants}
            labels={labels}
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
        <Composer client={client} threadId={threadId} onError={setError} />
      ) : (
        <p class="meta composer-note">You can read this thread through its parent; only its participants write here.</p>
      )}
    </section>
  );
}

/** A membership change or an artifact write, as one line between the messages. */
function noticeText(notice: ThreadNotice): string {
  switch (notice.type) {
    case 'participant_added':
      return `${notice.principalId} joined as ${notice.role}`;
    case 'participant_removed':
      return `${notice.principalId} left`;
    case 'artifact_updated':
      return `${notice.by} wrote ${notice.name} (version ${notice.version})`;
    default:
      return assertNever(notice, 'notice');
  }
}
