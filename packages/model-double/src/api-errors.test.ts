import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_ERRORS, apiErrorBody, rateLimitHeaders } from './api-errors.js';
import { ErrorStatusSchema } from './script.js';

describe('the API error catalogue', () => {
  it('covers every status a script may ask for, and the README names each', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const statuses = ErrorStatusSchema.options.map((o) => o.value);
    expect(Object.keys(API_ERRORS).map(Number).sort()).toEqual([...statuses].sort());
    for (const status of statuses) expect(readme).toContain(`${status} \`${API_ERRORS[status].type}\``);
  });

  it('builds the real API error body', () => {
    expect(apiErrorBody(529, 'req_1')).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: 'req_1',
    });
    expect(apiErrorBody(401, 'req_2', 'OAuth token has expired.').error).toEqual({
      type: 'authentication_error',
      message: 'OAuth token has expired.',
    });
  });

  it('puts the reset time retryAfterSeconds ahead in every ratelimit reset header', () => {
    const headers = rateLimitHeaders(90, new Date('2026-01-01T00:00:00.000Z'));
    expect(headers['retry-after']).toBe('90');
    const resets = Object.entries(headers).filter(([k]) => k.endsWith('-reset'));
    expect(resets).toHaveLength(4);
    for (const [, value] of resets) expect(value).toBe('2026-01-01T00:01:30Z');
  });
});
