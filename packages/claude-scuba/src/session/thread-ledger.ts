import { type CustomThreadEvent, type EventEnvelope, parseEvent } from '@bubble/protocol';

/** How many run anchors (seq → author) and answered seqs are remembered; the oldest go first. */
const MAX_REMEMBERED = 20_000;

export interface ThreadLedgerOptions {
  selfId: string;
  /** Whether a principal is a bot (unknown principals count as people: a person is never ignored by mistake). */
  isBot: (principalId: string) => boolean;
}

/**
 * What the thread itself says about the bot's work, read from its events
 * (every bot's and every person's), so that it holds across restarts:
 *
 * - which messages the bot answered: the seqs its runs name in
 *   `run_started.replyTo`, and in `run_finished.replyTo` for messages steered
 *   into a run that its turn took in. A message named there is never answered
 *   again, whatever the settlement checkpoint says;
 * - the bot's own runs left open (a kill -9 mid-reply);
 * - how many bot turns in a row answered only bots, whichever bots took them
 *   (a person's words reset it), for the loop guard.
 *
 * Observing is idempotent per seq, and per run for turns the session counts
 * before its own `run_started` comes back.
 */
export class ThreadLedger {
  readonly #options: ThreadLedgerOptions;
  #lastSeq = 0;
  readonly #answered = new Set<number>();
  /** First seq of each run seen → its author, for telling whether a turn answered bots alone. */
  readonly #authors = new Map<number, string>();
  readonly #runFirstSeq = new Map<string, number>();
  /** Own runs opened and not closed, by run id. */
  readonly #ownOpen = new Set<string>();
  /** Bot turns already counted in the streak, by principal and run id. */
  readonly #counted = new Set<string>();
  #botOnlyStreak = 0;

  constructor(options: ThreadLedgerOptions) {
    this.#options = options;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  get botOnlyStreak(): number {
    return this.#botOnlyStreak;
  }

  /** Whether one of the bot's runs already answered a message whose run has any of these seqs. */
  answered(seqs: readonly number[]): boolean {
    return seqs.some((seq) => this.#answered.has(seq));
  }

  /** The bot's own runs the thread shows open. */
  get ownOpenRuns(): string[] {
    return [...this.#ownOpen];
  }

  observe(envelope: EventEnvelope): void {
    if (envelope.seq <= this.#lastSeq) return;
    this.#lastSeq = envelope.seq;
    // Read as the protocol's typed event: one the server would refuse is not evidence of anything.
    const parsed = parseEvent(envelope);
    if (!parsed.ok) return;
    const event = parsed.event;
    switch (event.type) {
      case 'run_started': {
        const { runId } = event.data;
        const replyTo = event.data.replyTo ?? [];
        this.#anchor(event.principalId, runId, event.seq);
        const own = event.principalId === this.#options.selfId;
        if (own) {
          this.#ownOpen.add(runId);
          this.noteAnswered(replyTo);
        }
        if (own || this.#options.isBot(event.principalId)) this.countBotTurn(event.principalId, runId, replyTo);
        return;
      }
      case 'run_finished':
        if (event.principalId === this.#options.selfId) {
          this.#ownOpen.delete(event.data.runId);
          // Messages steered into a run that its turn took in: named here by the bot, beyond protocol.md.
          this.noteAnswered(seqsOf(event.data.replyTo));
        }
        return;
      case 'message_part': {
        const { runId, chunk } = event.data;
        this.#anchor(event.principalId, runId, event.seq);
        // A person's words end any bot-only streak.
        if (
          event.principalId !== this.#options.selfId &&
          !this.#options.isBot(event.principalId) &&
          chunk.type === 'text-delta' &&
          chunk.delta.trim() !== ''
        )
          this.#botOnlyStreak = 0;
        return;
      }
      case 'run_interrupt_requested':
      case 'tool_call_approval':
      case 'tool_call_result':
      case 'participant_added':
      case 'participant_removed':
      case 'artifact_updated':
      case 'agent_settings':
      case 'context_reset':
      case 'file_added':
        return;
      default: {
        // Only custom events are left: a new known type fails this assignment at compile time.
        const custom: CustomThreadEvent = event;
        void custom;
        return;
      }
    }
  }

  /** Notes the first seq of a run and its author, for telling whether a turn answered bots alone. */
  #anchor(principalId: string, runId: string, seq: number): void {
    const runKey = `${principalId}\u0000${runId}`;
    if (this.#runFirstSeq.has(runKey)) return;
    this.#runFirstSeq.set(runKey, seq);
    this.#authors.set(seq, principalId);
    trim(this.#runFirstSeq);
    trim(this.#authors);
  }

  /** Seqs a run of the bot answers (its `replyTo`), noted as the bot decides, before the thread echoes it. */
  noteAnswered(seqs: readonly number[]): void {
    for (const seq of seqs) this.#answered.add(seq);
    trim(this.#answered);
  }

  /**
   * A bot's turn that replies to `replyTo`: it lengthens the streak when every
   * message it answers was a bot's, and resets it when one was a person's.
   * Counted once per run (the session counts its own as it starts it).
   */
  countBotTurn(principalId: string, runId: string, replyTo: readonly number[]): void {
    if (replyTo.length === 0) return;
    const key = `${principalId}\u0000${runId}`;
    if (this.#counted.has(key)) return;
    this.#counted.add(key);
    trim(this.#counted);
    const botOnly = replyTo.every((seq) => {
      const author = this.#authors.get(seq);
      return author !== undefined && (author === this.#options.selfId || this.#options.isBot(author));
    });
    this.#botOnlyStreak = botOnly ? this.#botOnlyStreak + 1 : 0;
  }
}

function seqsOf(value: unknown): number[] {
  return Array.isArray(value) ? value.filter((seq): seq is number => Number.isSafeInteger(seq)) : [];
}

function trim(collection: Set<unknown> | Map<unknown, unknown>): void {
  while (collection.size > MAX_REMEMBERED) {
    const oldest = collection.keys().next().value;
    collection.delete(oldest);
  }
}
