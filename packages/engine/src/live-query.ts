import { query as sdkQuery, type Options, type Query } from '@anthropic-ai/claude-agent-sdk';
import { pino, type Logger } from 'pino';
import { AsyncQueue } from './async-queue.js';
import { classifyEngineError, type ClassifyInput, type EngineErrorClassification } from './classify-engine-error.js';
import { EngineError } from './engine-error.js';
import { PromptStream, userMessage, type UserContent, type UserMessageOptions } from './prompt-stream.js';
import {
  narrowSdkMessage,
  type NarrowedSdkMessage,
  type RateLimitEventLike,
  type ResultLike,
  type SdkMessageLike,
} from './sdk-message.js';

export type LiveQueryEndReason =
  /** close() was called, or end() was called and the CLI exited cleanly. */
  | 'closed'
  /** The iterator threw after an error result (unknown resume id; end() after a failed turn, where the CLI exits 1). */
  | 'error'
  /** The CLI went away on its own: crashed, killed, or exited without being asked. */
  | 'cli_exit';

export interface LiveQueryEnd {
  reason: LiveQueryEndReason;
  /** What the SDK iterator threw, if it threw. */
  error?: Error;
  /** The error classified for the user (absent when closed cleanly). */
  classified?: EngineErrorClassification;
  /** The last result seen before the end, if any. */
  lastResult?: ResultLike;
}

export interface LiveQueryOptions {
  /** SDK options for the one streaming query (env from buildChildEnv, cwd, canUseTool, …). */
  options: Options;
  logger?: Logger;
  /** The SDK's query(); injectable so an owner can wrap it. */
  query?: typeof sdkQuery;
}

export interface LiveQuery {
  /** The session id from system/init (re-emitted every turn); undefined until the first turn starts. */
  readonly sessionId: string | undefined;
  /** True once the CLI has ended (see `ended`); buffered messages may still be unread. */
  readonly isEnded: boolean;
  /** Pushes a user turn; returns its uuid (echoed as user_message_uuid(s)). Throws live_query_ended after the end. */
  push(content: UserContent, options?: UserMessageOptions): string;
  /** Stops the running turn (the query stays usable). Resolves with the CLI's receipt. */
  interrupt(): Promise<Awaited<ReturnType<Query['interrupt']>>>;
  /** Graceful: no more input; the CLI finishes what it has and exits. */
  end(): void;
  /** Hard: ends the CLI at once (no result for a running turn). */
  close(): void;
  /**
   * Classifies a failed turn's result (`is_error: true`) with what this query
   * saw around it: the assistant message's `error` field and text, and the last
   * rate_limit_event (for the reset time).
   */
  classify(result: ResultLike, now?: Date): EngineErrorClassification;
  /**
   * Every SDK message as yielded, in order (it never throws; it finishes when the CLI has ended). For
   * recorders; a bot reads `narrowed`. One reader, of this or of `narrowed`.
   */
  readonly messages: AsyncIterable<SdkMessageLike>;
  /** The same messages, each narrowed once here (`narrowSdkMessage`), so a reader never narrows again. */
  readonly narrowed: AsyncIterable<NarrowedSdkMessage>;
  /** How the query ended. Never rejects. */
  readonly ended: Promise<LiveQueryEnd>;
  /** The underlying SDK query, for control calls this wrapper does not cover (setModel, stopTask, …). */
  readonly sdkQuery: Query;
}

/**
 * Opens one streaming-input query and keeps it open (engine-notes §1, §6). The
 * SDK's iterator throws after an error result and when the CLI dies
 * (engine-notes §7.3); here that becomes the `ended` outcome instead of an
 * exception or an unhandled rejection.
 */
export function startLiveQuery(params: LiveQueryOptions): LiveQuery {
  const start = params.query ?? sdkQuery;
  return liveQueryFrom((prompt) => start({ prompt, options: params.options }), params.logger);
}

/**
 * A LiveQuery over an SDK query that `start` begins on the given prompt
 * stream: `query()` itself (`startLiveQuery`), or a parked spare's
 * `claim({ prompt })` (`SpareEngine`). Everything after the start is the same.
 */
export function liveQueryFrom(start: (prompt: PromptStream) => Query, log?: Logger): LiveQuery {
  const logger = log ?? pino({ level: 'silent' });
  const prompt = new PromptStream();
  const sdk = start(prompt);

  let sessionId: string | undefined;
  let lastResult: ResultLike | undefined;
  let lastWasErrorResult = false;
  let ownerStopped = false;
  let ownerClosed = false;
  let lastAssistantError: { error: string; text: string } | undefined;
  let lastRateLimitInfo: RateLimitEventLike['rate_limit_info'] | undefined;
  let isEnded = false;
  let resolveEnded!: (end: LiveQueryEnd) => void;
  const ended = new Promise<LiveQueryEnd>((resolve) => (resolveEnded = resolve));

  const finish = (end: LiveQueryEnd): void => {
    if (isEnded) return;
    isEnded = true;
    prompt.end();
    logger.debug({ reason: end.reason, error: end.error?.message, kind: end.classified?.kind }, 'live query ended');
    resolveEnded(end);
  };

  const observe = (message: SdkMessageLike): NarrowedSdkMessage => {
    if (typeof message.session_id === 'string' && message.session_id !== sessionId) {
      sessionId = message.session_id;
      logger.debug({ sessionId }, 'session id');
    }
    const narrowed = narrowSdkMessage(message);
    if (narrowed.kind === 'init') {
      // system/init starts every turn: error context from an earlier turn no longer applies.
      lastAssistantError = undefined;
      lastRateLimitInfo = undefined;
    } else if (narrowed.kind === 'result') {
      lastResult = narrowed.message;
      lastWasErrorResult = narrowed.message.is_error;
    } else if (narrowed.kind === 'assistant' && narrowed.message.error !== undefined) {
      const text = narrowed.message.message.content.map((b) => (typeof b.text === 'string' ? b.text : '')).join('');
      lastAssistantError = { error: narrowed.message.error, text };
    } else if (narrowed.kind === 'rate_limit') {
      lastRateLimitInfo = narrowed.message.rate_limit_info;
    } else if (narrowed.kind === 'unknown') {
      logger.debug({ reason: narrowed.reason }, 'unknown SDK message passed through');
    }
    return narrowed;
  };

  const classify = (result: ResultLike | undefined, error: unknown, now?: Date): EngineErrorClassification => {
    const input: ClassifyInput = { result, error };
    if (lastAssistantError) {
      input.assistantError = lastAssistantError.error;
      input.text = lastAssistantError.text;
    }
    if (lastRateLimitInfo) input.rateLimitInfo = lastRateLimitInfo;
    if (now) input.now = now;
    return classifyEngineError(input);
  };

  // The query is driven here, not by the reader: `ended` settles and the session
  // id is tracked even when nobody is reading (e.g. after close()). Once the reader
  // has left, what comes is no longer kept (`push` refuses it).
  const queue = new AsyncQueue<{ raw: SdkMessageLike; narrowed: NarrowedSdkMessage }>({
    secondReader: () =>
      new EngineError('live_query_messages_reused', 'the messages of a LiveQuery can be iterated only once'),
  });

  const drive = async (): Promise<void> => {
    try {
      for await (const message of sdk) {
        const raw = message as unknown as SdkMessageLike;
        queue.push({ raw, narrowed: observe(raw) });
      }
      const end: LiveQueryEnd = { reason: ownerStopped ? 'closed' : 'cli_exit' };
      if (lastResult) end.lastResult = lastResult;
      if (!ownerStopped) end.classified = classify(undefined, new Error('Claude Code exited without being asked to'));
      finish(end);
    } catch (thrown) {
      const error = thrown instanceof Error ? thrown : new Error(String(thrown));
      const reason: LiveQueryEndReason = ownerClosed ? 'closed' : lastWasErrorResult ? 'error' : 'cli_exit';
      const end: LiveQueryEnd = { reason, error };
      if (lastResult) end.lastResult = lastResult;
      if (reason !== 'closed') end.classified = classify(lastWasErrorResult ? lastResult : undefined, error);
      finish(end);
    } finally {
      queue.end();
    }
  };
  void drive();

  const ensureOpen = (action: string, afterEnd: boolean): void => {
    if (isEnded || ownerClosed || (ownerStopped && !afterEnd)) {
      throw new EngineError('live_query_ended', `cannot ${action}: the Claude query has ended`);
    }
  };

  return {
    get sessionId() {
      return sessionId;
    },
    get isEnded() {
      return isEnded;
    },
    push(content, options) {
      ensureOpen('push a message', false);
      const message = userMessage(content, options);
      try {
        prompt.push(message);
      } catch (error) {
        throw new EngineError('live_query_ended', 'cannot push a message: the Claude CLI stopped reading input', {
          cause: error,
        });
      }
      return message.uuid;
    },
    async interrupt() {
      // Still allowed after end(): the CLI may be finishing a turn the owner wants stopped.
      ensureOpen('interrupt', true);
      return sdk.interrupt();
    },
    end() {
      ownerStopped = true;
      prompt.end();
    },
    close() {
      ownerStopped = true;
      ownerClosed = true;
      prompt.end();
      sdk.close();
    },
    classify(result, now) {
      return classify(result, undefined, now);
    },
    messages: readerOf(queue, (entry) => entry.raw),
    narrowed: readerOf(queue, (entry) => entry.narrowed),
    ended,
    sdkQuery: sdk,
  };
}

/**
 * One view of the queue's single reader: iterating it takes the reader (a second
 * reader, of this view or another, throws at once), and leaving it leaves the queue.
 */
function readerOf<T, U>(queue: AsyncQueue<T>, view: (item: T) => U): AsyncIterable<U> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<U> {
      const items = queue[Symbol.asyncIterator]();
      return {
        async next(): Promise<IteratorResult<U>> {
          const next = await items.next();
          return next.done ? { value: undefined, done: true } : { value: view(next.value), done: false };
        },
        async return(): Promise<IteratorResult<U>> {
          await items.return?.();
          return { value: undefined, done: true };
        },
      };
    },
  };
}
