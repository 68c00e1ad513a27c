import type { EventEnvelope } from '@bubble/protocol';
import type pg from 'pg';
import { newEventId } from '../../domain/ids.js';
import type { RunState } from '../../domain/run-rules.js';
import type { LiveBusMessage } from '../../live/live-bus.js';
import { toEnvelope, type EventRow } from '../sqlite/sqlite-rows.js';
import type { AppendFacts, AppendFactsCache, AppendKeys } from './postgres-append-facts.js';
import { SQL } from './postgres-sql.js';

/**
 * What a write job sees of its group's transaction. Events, thread heads, run states and log
 * entries are staged here and written once for the whole group at commit (one multi-row insert
 * for the events); everything else a job writes goes to the database at once through `write`.
 *
 * The rule that lets one job fail without failing its group (no savepoint per job): a job throws
 * its expected refusals before its first `write`. A job that fails before writing leaves nothing
 * behind (its staged changes are undone); one that fails after, or any failed statement (which
 * aborts a PostgreSQL transaction), makes the group start over with each job in its own transaction.
 */
export interface WriteTx {
  readonly nowIso: string;
  /** A read inside the transaction: it sees the group's writes so far, but not its staged events. */
  read<R>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** A write. After it, this job's failure fails its whole group attempt. */
  write<R>(sql: string, params?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /**
   * The head seq of a thread as this group sees it (its staged events counted), null when there is no such
   * thread. Threads a job declares are locked before the group's jobs run; another is locked here.
   */
  head(threadId: string): Promise<number | null>;
  /** The head of a thread the group has already loaded, to correct a row read in the job. */
  knownHead(threadId: string): number | undefined;
  /** A thread this job has just inserted: head 0, and its row is this transaction's until commit. */
  insertedThread(threadId: string): void;
  /** Stages an event at the next seq of a thread whose `head` was read; answers its envelope. */
  appendEvent(input: StagedEventInput): EventEnvelope;
  /**
   * What is stored about an append's author, clientEventIds and runs, as of the group's start (what the
   * group itself staged is asked of `stagedEvent` and `stagedRun`); grants as the group left them.
   */
  appendFacts(keys: AppendKeys): Promise<AppendFacts>;
  /** This job made (`live`) or ended a grant: later appends of the group see it. */
  noteGrant(threadId: string, principalId: string, live: boolean): void;
  /** The event this group staged with that clientEventId, if any. */
  stagedEvent(threadId: string, principalId: string, clientEventId: string): EventEnvelope | undefined;
  /** The run state this group staged, if any. */
  stagedRun(threadId: string, runId: string): RunState | undefined;
  stageRun(threadId: string, runId: string, state: RunState): void;
  /** An entry of the token revocation log (null token: the end of a person's JWTs), stamped `nowIso`. */
  logRevocation(principalId: string, tokenId: string | null): void;
  /** A live message, published after commit (and, unless it is `events`, written to the outbox). */
  emit(message: LiveBusMessage): void;
}

export interface StagedEventInput {
  threadId: string;
  principalId: string;
  type: string;
  data: Record<string, unknown>;
  dataJson?: string | undefined;
  clientEventId: string | null;
}

export interface StagedEvent {
  envelope: EventEnvelope;
  dataJson: string;
}

/** Everything a group stages, written by the group commit at the end. */
export class GroupState {
  /** Heads loaded under lock (null: no such thread), moved on by staged events. */
  readonly heads = new Map<string, number | null>();
  readonly events: StagedEvent[] = [];
  readonly byClientId = new Map<string, EventEnvelope>();
  readonly runs = new Map<string, { threadId: string; runId: string; state: RunState }>();
  readonly revocations: Array<{ principalId: string; tokenId: string | null; revokedAt: string }> = [];
  readonly messages: LiveBusMessage[] = [];
  /** The facts of the group's appends, read in one round trip after its locks. */
  facts: AppendFactsCache | undefined;
  /** Grants the group's jobs made (true) or ended (false). */
  readonly grants = new Map<string, boolean>();
  /** A statement failed: PostgreSQL has aborted the transaction. */
  failed = false;
  /** The transaction's id, read with BEGIN: asked about when its COMMIT goes unanswered. */
  xid: string | undefined;
  /** The writer's session the group runs on (see `WriterSession`). */
  session: WriterSession | undefined;
}

/** A writer connection's backend on the database, and the server's start: what a lost COMMIT is asked about by. */
export interface WriterSession {
  pid: number;
  backendStart: string;
  started: string;
}

const key = (...parts: string[]): string => parts.join('\u0000');

/** The `WriteTx` of one job: its staged changes can be undone until the job returns. */
export class JobTx implements WriteTx {
  wrote = false;
  readonly #undo: Array<() => void> = [];
  readonly #marks: { events: number; revocations: number; messages: number };
  readonly #client: pg.PoolClient;
  readonly #group: GroupState;

  constructor(
    client: pg.PoolClient,
    group: GroupState,
    readonly nowIso: string,
  ) {
    this.#client = client;
    this.#group = group;
    this.#marks = {
      events: group.events.length,
      revocations: group.revocations.length,
      messages: group.messages.length,
    };
  }

  async #send<R>(sql: string, params: readonly unknown[]): Promise<pg.QueryResult & { rows: R[] }> {
    try {
      return (await this.#client.query(sql, params as unknown[])) as pg.QueryResult & { rows: R[] };
    } catch (error) {
      this.#group.failed = true;
      throw error;
    }
  }

  async read<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    return (await this.#send<R>(sql, params)).rows;
  }

  async write<R>(sql: string, params: readonly unknown[] = []): Promise<{ rows: R[]; rowCount: number }> {
    this.wrote = true;
    const result = await this.#send<R>(sql, params);
    return { rows: result.rows, rowCount: result.rowCount ?? 0 };
  }

  async head(threadId: string): Promise<number | null> {
    const known = this.#group.heads.get(threadId);
    if (known !== undefined) return known;
    const rows = await this.read<{ head_seq: number }>('SELECT head_seq FROM threads WHERE thread_id = $1 FOR UPDATE', [
      threadId,
    ]);
    const head = rows[0]?.head_seq ?? null;
    this.#group.heads.set(threadId, head);
    return head;
  }

  knownHead(threadId: string): number | undefined {
    return this.#group.heads.get(threadId) ?? undefined;
  }

  insertedThread(threadId: string): void {
    this.#setHead(threadId, 0);
  }

  appendEvent(input: StagedEventInput): EventEnvelope {
    const head = this.#group.heads.get(input.threadId);
    if (head === undefined || head === null)
      throw new Error(`thread ${input.threadId} was not locked before appending`);
    const envelope: EventEnvelope = {
      id: newEventId(),
      threadId: input.threadId,
      seq: head + 1,
      type: input.type,
      principalId: input.principalId,
      data: input.data,
      clientEventId: input.clientEventId,
      createdAt: this.nowIso,
    };
    this.#setHead(input.threadId, head + 1);
    this.#group.events.push({ envelope, dataJson: input.dataJson ?? JSON.stringify(input.data) });
    if (input.clientEventId !== null) {
      const k = key(input.threadId, input.principalId, input.clientEventId);
      this.#group.byClientId.set(k, envelope);
      this.#undo.push(() => this.#group.byClientId.delete(k));
    }
    return envelope;
  }

  async appendFacts(keys: AppendKeys): Promise<AppendFacts> {
    let facts = this.#group.facts?.factsOf(keys);
    if (facts === undefined) {
      const [row] = await this.read<{
        granted: boolean;
        replays: EventRow[] | null;
        runs: Array<{ run_id: string; principal_id: string; started: boolean; finished: boolean }> | null;
      }>(SQL.appendFacts, [keys.threadId, keys.principalId, keys.clientEventIds, keys.runIds]);
      facts = {
        granted: row?.granted === true,
        replays: new Map((row?.replays ?? []).map((r) => [r.client_event_id!, toEnvelope(r)])),
        runs: new Map(
          (row?.runs ?? []).map((r) => [
            r.run_id,
            { ownerPrincipalId: r.principal_id, started: r.started, finished: r.finished },
          ]),
        ),
      };
    }
    const changed = this.#group.grants.get(key(keys.threadId, keys.principalId));
    return changed === undefined ? facts : { ...facts, granted: changed };
  }

  noteGrant(threadId: string, principalId: string, live: boolean): void {
    const k = key(threadId, principalId);
    const before = this.#group.grants.get(k);
    this.#group.grants.set(k, live);
    this.#undo.push(() => (before === undefined ? this.#group.grants.delete(k) : this.#group.grants.set(k, before)));
  }

  stagedEvent(threadId: string, principalId: string, clientEventId: string): EventEnvelope | undefined {
    return this.#group.byClientId.get(key(threadId, principalId, clientEventId));
  }

  stagedRun(threadId: string, runId: string): RunState | undefined {
    return this.#group.runs.get(key(threadId, runId))?.state;
  }

  stageRun(threadId: string, runId: string, state: RunState): void {
    const k = key(threadId, runId);
    const before = this.#group.runs.get(k);
    this.#group.runs.set(k, { threadId, runId, state });
    this.#undo.push(() => (before === undefined ? this.#group.runs.delete(k) : this.#group.runs.set(k, before)));
  }

  logRevocation(principalId: string, tokenId: string | null): void {
    this.#group.revocations.push({ principalId, tokenId, revokedAt: this.nowIso });
  }

  emit(message: LiveBusMessage): void {
    this.#group.messages.push(message);
  }

  /** Takes back what this job staged (it failed before writing). */
  rollBack(): void {
    for (const step of this.#undo.reverse()) step();
    this.#group.events.length = this.#marks.events;
    this.#group.revocations.length = this.#marks.revocations;
    this.#group.messages.length = this.#marks.messages;
  }

  #setHead(threadId: string, head: number): void {
    const before = this.#group.heads.get(threadId);
    this.#group.heads.set(threadId, head);
    this.#undo.push(() =>
      before === undefined ? this.#group.heads.delete(threadId) : this.#group.heads.set(threadId, before),
    );
  }
}
