import { describe, expect, it } from 'vitest';
import { runErrorAdvice } from './run-error-advice';

const now = Date.parse('2026-12-01T18:00:00Z');

describe('runErrorAdvice', () => {
  it('says what to do next, in one line, for each code', () => {
    const codes = [
      'rate_limit',
      'overloaded',
      'network',
      'auth',
      'max_turns',
      'budget',
      'session_not_found',
      'sandbox_unavailable',
      'interrupted',
      'something_new',
    ];
    const lines = codes.map((code) => runErrorAdvice({ code, message: 'x' }, now));
    for (const advice of lines) {
      expect(advice).not.toContain('\n');
      expect(advice.length).toBeLessThan(100);
    }
    expect(new Set(lines).size).toBe(codes.length);
  });

  it('says when a usage limit resets', () => {
    expect(runErrorAdvice({ code: 'rate_limit', message: 'x', resetAt: '2026-12-01T20:00:00Z' }, now)).toBe(
      "The bot's Claude usage limit is reached. Ask again in 2 hours.",
    );
    expect(runErrorAdvice({ code: 'rate_limit', message: 'x', resetAt: '2026-12-01T17:00:00Z' }, now)).toBe(
      "The bot's Claude usage limit was reached; it has reset since. Ask again.",
    );
    expect(runErrorAdvice({ code: 'rate_limit', message: 'x', resetAt: 'soon' }, now)).toBe(
      "The bot's Claude usage limit is reached. Ask again later.",
    );
  });
});
