import type { Logger } from 'pino';
import { DISCORD_MESSAGE_LIMIT, openFenceAt, splitMessage } from './split-message.js';

/** The three calls a reply needs from Discord (a channel, behind a small interface). */
export interface ReplyTarget {
  /** Sends a new message; its id. */
  send(content: string): Promise<string>;
  edit(messageId: string, content: string): Promise<void>;
  /** "typing…" for about 10 s. */
  typing(): Promise<void>;
  /** Deletes a message of the reply whose text moved into an earlier one. */
  remove(messageId: string): Promise<void>;
  /** Whether an error of `edit` means the message is gone for good (deleted, not editable), rather than a passing failure. */
  isGone(error: unknown): boolean;
}

/** Between two edits of the live message: Discord allows about 5 edits per 5 s per channel. */
export const DEFAULT_EDIT_INTERVAL_MS = 1200;

export interface ReplyStreamOptions {
  logger: Logger;
  /** Between two edits of the live message. Discord allows about 5 edits per 5 s per channel; discord.js waits out any 429. */
  editIntervalMs?: number;
  /** Discord shows "typing…" for about 10 s; it is sent again this often while the reply runs. */
  typingIntervalMs?: number;
  limit?: number;
}

interface Segment {
  id: string | undefined;
  /** What the message should show. */
  content: string;
  /** What it shows now (after the last edit that went through). */
  shown: string | undefined;
}

/**
 * A reply that grows by edits while Claude streams (seed 004, "Streaming
 * replies"). Text past Discord's 2,000 characters goes on in a new message,
 * split on a line or code-fence boundary (a code block is closed and reopened,
 * never cut). Edits are paced; one that fails sends the text as a new message
 * instead, so nothing is lost. Before any text, a status line (queue position,
 * "thinking…") shows in the same message.
 */
export class ReplyStream {
  readonly #target: ReplyTarget;
  readonly #logger: Logger;
  readonly #editIntervalMs: number;
  readonly #typingIntervalMs: number;
  readonly #limit: number;
  readonly #segments: Segment[] = [{ id: undefined, content: '', shown: undefined }];
  #text = '';
  #status: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #typingTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #lastFlushAt = 0;
  #finished = false;
  #succeeded: boolean | undefined;

  constructor(target: ReplyTarget, options: ReplyStreamOptions) {
    this.#target = target;
    this.#logger = options.logger;
    this.#editIntervalMs = options.editIntervalMs ?? DEFAULT_EDIT_INTERVAL_MS;
    this.#typingIntervalMs = options.typingIntervalMs ?? 8000;
    this.#limit = options.limit ?? DISCORD_MESSAGE_LIMIT;
  }

  /** Every message id this reply has used, in order. */
  get messageIds(): string[] {
    return this.#segments.map((s) => s.id).filter((id): id is string => id !== undefined);
  }

  get text(): string {
    return this.#text;
  }

  /** How the reply ended: true ok, false failed or stopped, undefined still running. */
  get succeeded(): boolean | undefined {
    return this.#succeeded;
  }

  /** Shows "typing…" now and every few seconds until `finish`. */
  startTyping(): void {
    if (this.#typingTimer !== undefined || this.#finished) return;
    const tick = (): void => {
      this.#target.typing().catch((error: unknown) => this.#logger.debug({ err: error }, 'typing failed'));
    };
    tick();
    this.#typingTimer = setInterval(tick, this.#typingIntervalMs);
  }

  /** A line shown while there is no text yet (replaced by the first text). */
  setStatus(status: string): void {
    if (this.#finished) return;
    this.#status = status;
    if (this.#text === '') this.#schedule(true);
  }

  append(delta: string): void {
    if (this.#finished || delta === '') return;
    this.#text += delta;
    this.#schedule(false);
  }

  /**
   * Ends the reply: the last edit goes out, typing stops. A failure appends its
   * notice (never a success marker), after closing a code block left open.
   * `succeeded` is true only if the turn went well and its text was delivered.
   */
  async finish(outcome: { ok: true } | { ok: false; notice: string }): Promise<void> {
    if (this.#finished) return;
    this.#stopTimers();
    if (!outcome.ok) {
      const fence = openFenceAt(this.#text);
      if (fence !== undefined) this.#text += `\n${/^(`{3,}|~{3,})/.exec(fence)?.[1] ?? '```'}`;
      this.#text += `${this.#text === '' ? '' : '\n\n'}⚠️ ${outcome.notice}`;
    } else if (this.#text.trim() === '') {
      this.#text = '_(Claude finished without a text reply.)_';
    }
    this.#finished = true;
    const delivered = await this.#flushNow();
    this.#succeeded = outcome.ok && delivered;
  }

  /** Stops timers without sending anything more (shutdown). */
  dispose(): void {
    this.#finished = true;
    this.#stopTimers();
  }

  #stopTimers(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#typingTimer !== undefined) clearInterval(this.#typingTimer);
    this.#timer = undefined;
    this.#typingTimer = undefined;
  }

  /**
   * Lays the whole text out in messages again. A full message's chunk mostly
   * stays as it was while text is added after it (the split is greedy), but
   * not always: a code block that grows may move whole into the next message.
   * A message whose chunk changed is edited again, and one left with no chunk
   * is deleted (its text is in an earlier message now).
   */
  #layout(): Segment[] {
    const chunks = splitMessage(this.#text, this.#limit);
    if (chunks.length === 0) chunks.push('');
    for (let i = 0; i < chunks.length; i++) {
      const segment = this.#segments[i] ?? { id: undefined, content: '', shown: undefined };
      segment.content = chunks[i]!;
      this.#segments[i] = segment;
    }
    return this.#segments.splice(chunks.length);
  }

  #schedule(statusOnly: boolean): void {
    if (this.#timer !== undefined || this.#finished) return;
    const wait = Math.max(0, this.#lastFlushAt + this.#editIntervalMs - Date.now());
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        void this.#flushNow();
      },
      statusOnly && this.#lastFlushAt === 0 ? 0 : wait,
    );
  }

  /** Runs one flush after the ones before it; whether it got everything out. */
  #flushNow(): Promise<boolean> {
    const flushed = this.#flushing
      .then(() => this.#flush())
      .then(
        () => true,
        (error: unknown) => {
          this.#logger.warn({ err: error }, 'a reply update failed');
          return false;
        },
      );
    this.#flushing = flushed.then(() => undefined);
    return flushed;
  }

  async #flush(): Promise<void> {
    this.#lastFlushAt = Date.now();
    for (const gone of this.#layout()) {
      if (gone.id !== undefined) {
        await this.#target
          .remove(gone.id)
          .catch((error: unknown) =>
            this.#logger.warn({ err: error, messageId: gone.id }, 'could not delete a reply message'),
          );
      }
    }
    for (let i = 0; i < this.#segments.length; i++) {
      const segment = this.#segments[i]!;
      const isLive = i === this.#segments.length - 1;
      const content =
        segment.content !== ''
          ? segment.content
          : isLive && this.#status !== undefined && !this.#finished
            ? this.#status
            : '';
      if (content === '' || content === segment.shown) continue;
      if (segment.id === undefined) {
        segment.id = await this.#target.send(content);
        segment.shown = content;
        continue;
      }
      try {
        await this.#target.edit(segment.id, content);
        segment.shown = content;
      } catch (error) {
        if (!this.#target.isGone(error) && !this.#finished) {
          // A passing failure: the next flush edits again (the message still shows its older text).
          this.#logger.warn(
            { err: error, messageId: segment.id },
            'editing the reply failed; trying again with the next update',
          );
          continue;
        }
        // Gone, or the last chance: the text goes out as a new message rather than being lost.
        this.#logger.warn(
          { err: error, messageId: segment.id },
          'editing the reply failed; sending the text as a new message',
        );
        segment.id = await this.#target.send(content);
        segment.shown = content;
      }
    }
  }
}
