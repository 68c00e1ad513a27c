import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyEngineError, findResetAt, type ClassifyInput, type EngineErrorKind } from './classify-engine-error.js';

interface ErrorFixture {
  name: string;
  cause: string;
  input: Omit<ClassifyInput, 'now'> & { now?: string };
  expected: { kind: EngineErrorKind; resetAt?: string };
}

// Captured from the real CLI against the model double by test/errors.test.ts (RECORD_FIXTURES=1).
const fixtures = readFileSync(new URL('./__fixtures__/engine-errors.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as ErrorFixture);

describe('classifyEngineError over real CLI error captures (__fixtures__/engine-errors.jsonl)', () => {
  it('covers every error class the engine reports', () => {
    const kinds = new Set(fixtures.map((f) => f.expected.kind));
    expect([...kinds].sort()).toEqual(['auth', 'budget', 'max_turns', 'network', 'overloaded', 'rate_limit']);
  });

  it.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, fixture) => {
    const { now, ...rest } = fixture.input;
    const input: ClassifyInput = now === undefined ? rest : { ...rest, now: new Date(now) };
    const classified = classifyEngineError(input);
    expect(classified.kind).toBe(fixture.expected.kind);
    expect(classified.resetAt).toBe(fixture.expected.resetAt);
    if (classified.kind === 'auth') expect(classified.message).toContain('claude setup-token');
    if (fixture.expected.resetAt) expect(classified.message).toContain(fixture.expected.resetAt);
    expect(classified.message.length).toBeGreaterThan(0);
  });
});

describe('classifyEngineError from its other inputs', () => {
  it('reads the result subtype and terminal reason first', () => {
    expect(classifyEngineError({ result: { subtype: 'error_max_turns', is_error: true } }).kind).toBe('max_turns');
    expect(classifyEngineError({ result: { subtype: 'error_max_budget_usd', is_error: true } }).kind).toBe('budget');
    expect(
      classifyEngineError({ result: { subtype: 'error_during_execution', terminal_reason: 'aborted_tools' } }),
    ).toMatchObject({
      kind: 'interrupted',
      retryable: false,
    });
  });

  it('reads the "No conversation found" error of an unknown resume id', () => {
    expect(
      classifyEngineError({
        result: {
          subtype: 'error_during_execution',
          is_error: true,
          errors: ['No conversation found with session ID: 3f2b6c1e-0d4a-4c8e-9b7a-5e6f7a8b9c0d'],
        },
      }).kind,
    ).toBe('session_not_found');
  });

  it("reads the CLI's refusal to start without a sandbox (measured with bwrap off PATH, engine-notes §8)", () => {
    const text =
      'Sandbox required but unavailable: sandbox is enabled but dependencies are missing: bubblewrap (bwrap) not installed · install missing tools (e.g. apt install bubblewrap socat) or see https://code.claude.com/docs/en/sandboxing. Set sandbox.failIfUnavailable=false to allow unsandboxed execution.';
    const fromResult = classifyEngineError({
      result: { subtype: 'error_during_execution', is_error: true, errors: [text] },
    });
    expect(fromResult).toMatchObject({ kind: 'sandbox_unavailable', retryable: false });
    expect(fromResult.message).toContain('never runs tools unsandboxed');
    expect(fromResult.message).toContain('bubblewrap (bwrap) not installed');
    const thrown = Object.assign(new Error(`Claude Code returned an error result: ${text}`), {
      startupFailureReason: 'sandbox_required_unavailable',
    });
    expect(classifyEngineError({ error: thrown }).kind).toBe('sandbox_unavailable');
  });

  it('falls back to unknown, quoting the first line of the detail', () => {
    const c = classifyEngineError({ error: new Error('Claude Code process exited with code 1\nmore') });
    expect(c).toMatchObject({
      kind: 'unknown',
      retryable: false,
      message: 'Claude ran into an error: Claude Code process exited with code 1',
    });
  });

  it('includes the error cause and code in the detail (e.g. a network error wrapped by fetch)', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(classifyEngineError({ error: new Error('request failed', { cause }) }).kind).toBe('network');
  });
});

describe('findResetAt', () => {
  const now = new Date('2026-11-29T20:04:30Z');
  it('prefers the rate_limit_event, then the unified reset header, then the RFC 3339 reset headers, then retry-after', () => {
    expect(findResetAt('', { rateLimitInfo: { resetsAt: 1795989840 } })).toBe('2026-11-29T22:04:00.000Z');
    expect(findResetAt('', { headers: { 'anthropic-ratelimit-unified-reset': '1795989840' } })).toBe(
      '2026-11-29T22:04:00.000Z',
    );
    expect(findResetAt('', { headers: { 'anthropic-ratelimit-requests-reset': '2026-11-29T20:05:00Z' } })).toBe(
      '2026-11-29T20:05:00.000Z',
    );
    expect(findResetAt('', { headers: { 'retry-after': '30' }, now })).toBe('2026-11-29T20:05:00.000Z');
    expect(findResetAt('', { headers: { 'retry-after': '30' } })).toBeUndefined();
  });

  it('reads clock texts in their time zone: the next such time, or a dated one', () => {
    expect(findResetAt("You've hit your 5-hour limit · resets 10:04pm (UTC)", { now })).toBe(
      '2026-11-29T22:04:00.000Z',
    );
    // Already past today: tomorrow.
    expect(findResetAt("You've hit your 5-hour limit · resets 7am (UTC)", { now })).toBe('2026-11-30T07:00:00.000Z');
    expect(findResetAt("You've hit your weekly limit · resets Dec 2, 8:04pm (UTC)", { now })).toBe(
      '2026-12-02T20:04:00.000Z',
    );
    // 10pm in Berlin (UTC+1 in November) is 21:00 UTC.
    expect(findResetAt("You've hit your 5-hour limit · resets 10pm (Europe/Berlin)", { now })).toBe(
      '2026-11-29T21:00:00.000Z',
    );
    expect(findResetAt('resets 10pm (Not/AZone)', { now })).toBeUndefined();
    expect(findResetAt("You've hit your 5-hour limit · resets 10:04pm (UTC)")).toBeUndefined();
  });
});
