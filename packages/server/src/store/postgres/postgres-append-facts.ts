import type { EventEnvelope } from '@bubble/protocol';
import type { RunState } from '../../domain/run-rules.js';
import { toEnvelope, type EventRow } from '../sqlite/sqlite-rows.js';
import { preparedName, type Statement } from './postgres-pipeline.js';
import { EVENT_COLUMNS } from './postgres-sql.js';

/** What an append request decides on besides the thread's head: named so a group can read them all at once. */
export interface AppendKeys {
  threadId: string;
  principalId: string;
  clientEventIds: readonly string[];
  runIds: readonly string[];
}

/** The stored state an append decides on: the author's grant, the events of its clientEventIds, its runs. */
export interface AppendFacts {
  granted: boolean;
  /** By clientEventId. */
  replays: Map<string, EventEnvelope>;
  /** By runId. */
  runs: Map<string, RunState>;
}

const key = (...parts: string[]): string => parts.join('\u0000');

export type FactRow =
  | { kind: 'g'; thread_id: string; principal_id: string; fact: null }
  | { kind: 'e'; thread_id: string; principal_id: string; fact: EventRow }
  | {
      kind: 'r';
      thread_id: string;
      principal_id: string;
      fact: { run_id: string; principal_id: string; started: boolean; finished: boolean };
    };

/** One statement for the facts of any number of appends (keys repeated across them are sent once). */
const FACTS_SQL = `
  SELECT 'g' AS kind, g.thread_id, g.principal_id, NULL::json AS fact
    FROM grants g JOIN unnest($1::text[], $2::text[]) AS k(t, p) ON g.thread_id = k.t AND g.principal_id = k.p
    WHERE g.revoked_at IS NULL
  UNION ALL
  SELECT 'e', e.thread_id, e.principal_id, row_to_json(e) AS fact
    FROM (SELECT ${EVENT_COLUMNS} FROM events) e
    JOIN unnest($3::text[], $4::text[], $5::text[]) AS k(t, p, c)
      ON e.thread_id = k.t AND e.principal_id = k.p AND e.client_event_id = k.c
  UNION ALL
  SELECT 'r', r.thread_id, r.principal_id, row_to_json(r)
    FROM (SELECT thread_id, run_id, principal_id, started, finished FROM runs) r
    JOIN unnest($6::text[], $7::text[]) AS k(t, id) ON r.thread_id = k.t AND r.run_id = k.id`;

/**
 * The facts of every append of a group, read in the round trip that locks the group's threads,
 * right behind the locks. Those rows change only under the threads' locks (grants, runs and events are all
 * written by jobs that append to the thread), so they hold for the whole group, apart from what
 * the group itself changes: its staged events and runs (`WriteTx`), and its grant changes (the
 * overlay `WriteTx.noteGrant` keeps).
 */
export class AppendFactsCache {
  readonly #pairs = new Set<string>();
  readonly #granted = new Set<string>();
  readonly #askedEvents = new Set<string>();
  readonly #events = new Map<string, EventEnvelope>();
  readonly #askedRuns = new Set<string>();
  readonly #runs = new Map<string, RunState>();

  readonly #params: string[][] = [[], [], [], [], [], [], []];

  /** A cache of the facts of `requests`, to be filled by the rows of {@link statement}. */
  constructor(requests: readonly AppendKeys[]) {
    const [grantThreads, grantPrincipals, eventThreads, eventPrincipals, eventIds, runThreads, runIds] = this.#params;
    for (const r of requests) {
      if (!this.#pairs.has(key(r.threadId, r.principalId))) {
        this.#pairs.add(key(r.threadId, r.principalId));
        grantThreads!.push(r.threadId);
        grantPrincipals!.push(r.principalId);
      }
      for (const c of r.clientEventIds) {
        if (this.#askedEvents.has(key(r.threadId, r.principalId, c))) continue;
        this.#askedEvents.add(key(r.threadId, r.principalId, c));
        eventThreads!.push(r.threadId);
        eventPrincipals!.push(r.principalId);
        eventIds!.push(c);
      }
      for (const id of r.runIds) {
        if (this.#askedRuns.has(key(r.threadId, id))) continue;
        this.#askedRuns.add(key(r.threadId, id));
        runThreads!.push(r.threadId);
        runIds!.push(id);
      }
    }
  }

  /** The one statement that reads them, sent with the group's locks (see `postgres-pipeline.ts`). */
  statement(): Statement {
    return { sql: FACTS_SQL, params: this.#params, name: preparedName(FACTS_SQL) };
  }

  /** Takes in the rows {@link statement} answered. */
  absorb(rows: readonly FactRow[]): this {
    for (const row of rows) {
      if (row.kind === 'g') this.#granted.add(key(row.thread_id, row.principal_id));
      else if (row.kind === 'e') {
        this.#events.set(key(row.thread_id, row.principal_id, row.fact.client_event_id!), toEnvelope(row.fact));
      } else {
        this.#runs.set(key(row.thread_id, row.fact.run_id), {
          ownerPrincipalId: row.fact.principal_id,
          started: row.fact.started,
          finished: row.fact.finished,
        });
      }
    }
    return this;
  }

  /** The facts of these keys, if this cache read all of them. */
  factsOf(keys: AppendKeys): AppendFacts | undefined {
    const { threadId, principalId } = keys;
    if (!this.#pairs.has(key(threadId, principalId))) return undefined;
    if (!keys.clientEventIds.every((c) => this.#askedEvents.has(key(threadId, principalId, c)))) return undefined;
    if (!keys.runIds.every((id) => this.#askedRuns.has(key(threadId, id)))) return undefined;
    const replays = new Map<string, EventEnvelope>();
    for (const c of keys.clientEventIds) {
      const event = this.#events.get(key(threadId, principalId, c));
      if (event) replays.set(c, event);
    }
    const runs = new Map<string, RunState>();
    for (const id of keys.runIds) {
      const run = this.#runs.get(key(threadId, id));
      if (run) runs.set(id, run);
    }
    return { granted: this.#granted.has(key(threadId, principalId)), replays, runs };
  }
}
