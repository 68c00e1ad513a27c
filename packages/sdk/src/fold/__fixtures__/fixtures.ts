import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventEnvelope } from '@bubble/protocol';

/** Test support for the fold's tests: the recorded threads beside this file, and a deep freeze. */
export const FIXTURE_DIR = dirname(fileURLToPath(import.meta.url));

export interface RecordedThread {
  readonly name: string;
  readonly events: EventEnvelope[];
}

export function recordedThreads(): RecordedThread[] {
  return readdirSync(FIXTURE_DIR)
    .filter((file) => file.endsWith('.jsonl'))
    .sort()
    .map((file) => ({ name: basename(file, '.jsonl'), events: readEvents(join(FIXTURE_DIR, file)) }));
}

export function readEvents(path: string): EventEnvelope[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as EventEnvelope);
}

/** Freezes a value and everything it holds, so a fold that writes into an earlier state throws. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
  return value;
}

let seq = 0;
/** A hand-made envelope, seqs counting from 1 after `resetSeq()`. */
export function ev(type: string, data: Record<string, unknown>, principalId = 'bot'): EventEnvelope {
  seq += 1;
  return {
    id: `ev_${seq}`,
    threadId: 'th_1',
    seq,
    type,
    principalId,
    data,
    clientEventId: null,
    createdAt: `2026-12-01T10:00:${String(seq % 60).padStart(2, '0')}Z`,
  };
}
export function resetSeq(): void {
  seq = 0;
}
export const part = (runId: string, chunk: Record<string, unknown>, principalId = 'bot'): EventEnvelope =>
  ev('message_part', { runId, chunk }, principalId);
