import { randomUUID } from 'node:crypto';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { EngineError } from './engine-error.js';

/** What a user turn may carry: plain text or Messages API content blocks. */
export type UserContent = SDKUserMessage['message']['content'];

export interface UserMessageOptions {
  /** Client id, echoed back as user_message_uuid(s); also turns on command_lifecycle frames. Default: a fresh UUID. */
  uuid?: string;
  /** false = append to the transcript without starting a turn (merged into the next one that does). */
  shouldQuery?: boolean;
  priority?: 'now' | 'next' | 'later';
}

/** Builds the SDKUserMessage the CLI expects on its streaming input (engine-notes §1). */
export function userMessage(content: UserContent, options: UserMessageOptions = {}): SDKUserMessage & { uuid: string } {
  const message: SDKUserMessage & { uuid: string } = {
    type: 'user',
    message: { role: 'user', content },
    parent_tool_use_id: null,
    uuid: options.uuid ?? randomUUID(),
  } as SDKUserMessage & { uuid: string };
  if (options.shouldQuery !== undefined) message.shouldQuery = options.shouldQuery;
  if (options.priority !== undefined) message.priority = options.priority;
  return message;
}

/**
 * A push/pull queue of user messages: the SDK's streaming-input prompt. The
 * owner pushes; the SDK pulls, waiting while the queue is empty. The CLI stays
 * alive until the stream ends, so `end()` is the graceful way to let it exit.
 */
export class PromptStream implements AsyncIterable<SDKUserMessage> {
  readonly #queue: SDKUserMessage[] = [];
  #waiter: ((result: IteratorResult<SDKUserMessage>) => void) | undefined;
  #ended = false;
  #iterated = false;

  get ended(): boolean {
    return this.#ended;
  }

  /** Number of pushed messages the SDK has not pulled yet. */
  get pending(): number {
    return this.#queue.length;
  }

  push(message: SDKUserMessage): void {
    if (this.#ended) {
      throw new EngineError('prompt_stream_ended', 'cannot push a message: the prompt stream has ended');
    }
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter({ value: message, done: false });
    } else {
      this.#queue.push(message);
    }
  }

  /** No more messages. Messages already pushed are still delivered. Idempotent. */
  end(): void {
    this.#ended = true;
    const waiter = this.#waiter;
    if (waiter && this.#queue.length === 0) {
      this.#waiter = undefined;
      waiter({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    if (this.#iterated) {
      throw new EngineError('prompt_stream_reused', 'a PromptStream can be iterated only once');
    }
    this.#iterated = true;
    return {
      next: () => {
        const queued = this.#queue.shift();
        if (queued) return Promise.resolve({ value: queued, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiter = resolve;
        });
      },
      return: () => {
        // The reader stopped (the CLI exited or the query was closed): later pushes must fail loudly.
        this.#ended = true;
        this.#queue.length = 0;
        const waiter = this.#waiter;
        this.#waiter = undefined;
        waiter?.({ value: undefined, done: true });
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
