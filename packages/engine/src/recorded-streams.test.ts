import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { narrowSdkMessage, type NarrowedKind } from './sdk-message.js';

// Streams recorded from the real CLI by the tests in ../test (RECORD_FIXTURES=1).
const dir = new URL('./__fixtures__/', import.meta.url);
const streams = readdirSync(dir)
  .filter((f) => f.endsWith('.jsonl') && f !== 'engine-errors.jsonl')
  .map((file) => ({
    file,
    messages: readFileSync(new URL(file, dir), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as unknown),
  }));

describe('recorded SDK streams', () => {
  it('exist for every scenario the translators will be golden-tested against', () => {
    expect(streams.map((s) => s.file).sort()).toEqual(
      expect.arrayContaining([
        'text-streamed.jsonl',
        'two-turns.jsonl',
        'batched-while-streaming.jsonl',
        'folded-while-tool-runs.jsonl',
        'tool-allowed.jsonl',
        'tool-denied.jsonl',
        'tool-allowed-updated-input.jsonl',
        'tool-denied-interrupt.jsonl',
        'ask-user-question.jsonl',
        'mcp-tool.jsonl',
        'thinking.jsonl',
        'interrupt-streaming.jsonl',
        'interrupt-tool.jsonl',
        'subagent-foreground.jsonl',
        'subagent-background.jsonl',
        'resume.jsonl',
        'resume-unknown-session.jsonl',
        'error-auth-api-key-401.jsonl',
        'error-rate-limit-subscription-5h.jsonl',
        'error-overloaded-529.jsonl',
        'error-network-refused.jsonl',
        'error-max-turns.jsonl',
        'error-budget.jsonl',
      ]),
    );
  });

  it.each(streams.map((s) => [s.file, s.messages] as const))(
    '%s narrows with no unknown message',
    (_file, messages) => {
      const narrowed = messages.map(narrowSdkMessage);
      expect(narrowed.filter((n) => n.kind === 'unknown')).toEqual([]);
      const kinds = new Set<NarrowedKind>(narrowed.map((n) => n.kind));
      expect(kinds.has('result')).toBe(true);
    },
  );
});
