import { randomUUID } from 'node:crypto';
import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { AsyncQueue } from './async-queue.js';
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
 * The SDK's streaming-input prompt: a push/pull queue of user messages
 * (`AsyncQueue`). The owner pushes; the SDK pulls, waiting while it is empty.
 * The CLI stays alive until the stream ends, so `end()` is the graceful way to
 * let it exit. Once its reader has stopped (the CLI exited, the query was
 * closed) a push throws, so a message is never lost without a word.
 */
export class PromptStream implements AsyncIterable<SDKUserMessage> {
  readonly #queue = new AsyncQueue<SDKUserMessage>({
    secondReader: () => new EngineError('prompt_stream_reused', 'a PromptStream can be iterated only once'),
  });

  get ended(): boolean {
    return this.#queue.ended;
  }

  /** Number of pushed messages the SDK has not pulled yet. */
  get pending(): number {
    return this.#queue.size;
  }

  push(message: SDKUserMessage): void {
    if (!this.#queue.push(message)) {
      throw new EngineError('prompt_stream_ended', 'cannot push a message: the prompt stream has ended');
    }
  }

  /** No more messages. Messages already pushed are still delivered. Idempotent. */
  end(): void {
    this.#queue.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    return this.#queue[Symbol.asyncIterator]();
  }
}
