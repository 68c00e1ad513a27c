import type { TimelineItem } from '@bubble/sdk/client';
import { describe, expect, it } from 'vitest';
import { continuedRuns, GROUP_GAP_MS } from './message-groups';

const at = (minutes: number) => new Date(Date.UTC(2026, 11, 1, 12, 0) + minutes * 60_000).toISOString();

function grouped(rows: ([runId: string, principalId: string, minutes: number] | 'notice')[]): string[] {
  const runs = new Map<string, { principalId: string; createdAt: string }>();
  const items: TimelineItem[] = rows.map((row, seq) => {
    if (row === 'notice') {
      return { kind: 'notice', seq, notice: { type: 'participant_added', principalId: 'x', role: 'member', by: 'a' } };
    }
    const [runId, principalId, minutes] = row;
    runs.set(runId, { principalId, createdAt: at(minutes) });
    return { kind: 'run', runId, seq };
  });
  return [...continuedRuns(items, (id) => runs.get(id))];
}

describe('continuedRuns', () => {
  it('groups a burst of one author under the first message', () => {
    expect(
      grouped([
        ['a1', 'alice', 0],
        ['a2', 'alice', 1],
        ['a3', 'alice', 4],
      ]),
    ).toEqual(['a2', 'a3']);
  });

  it('starts a new group for another author, after a gap, and after a notice', () => {
    expect(
      grouped([
        ['a1', 'alice', 0],
        ['b1', 'bob', 1],
        ['a2', 'alice', 2],
        ['a3', 'alice', 2 + GROUP_GAP_MS / 60_000 + 1],
        'notice',
        ['a4', 'alice', 9],
        ['a5', 'alice', 9],
      ]),
    ).toEqual(['a5']);
  });

  it('keeps the gap between neighbours, not from the first message', () => {
    expect(
      grouped([
        ['a1', 'alice', 0],
        ['a2', 'alice', 4],
        ['a3', 'alice', 8],
      ]),
    ).toEqual(['a2', 'a3']);
  });

  it('does not group a run that is unknown or earlier than the one above', () => {
    expect(
      grouped([
        ['a1', 'alice', 5],
        ['a2', 'alice', 1],
      ]),
    ).toEqual([]);
    expect([...continuedRuns([{ kind: 'run', runId: 'gone', seq: 1 }], () => undefined)]).toEqual([]);
  });
});
