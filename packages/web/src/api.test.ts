import { describe, expect, it } from 'vitest';
import { BubbleApiError, describeError, isUserToken, tokenFromFragment } from './api';

const T = `bubble_user_${'A'.repeat(43)}`;

describe('tokenFromFragment', () => {
  it.each([
    [`#token=${T}`, T],
    [`token=${T}`, T],
    [`#x=1&token=${T}`, T],
    [`#token=bubble_agent_${'A'.repeat(43)}`, null],
    ['#token=', null],
    ['', null],
  ])('%s', (hash, expected) => expect(tokenFromFragment(hash)).toBe(expected));

  it('accepts only user tokens', () => {
    expect(isUserToken(` ${T} `)).toBe(true);
    expect(isUserToken('hello')).toBe(false);
  });
});

describe('describeError', () => {
  const network = new BubbleApiError({
    code: 'network',
    status: 0,
    retryable: true,
    message: 'GET /v1/threads failed: Failed to fetch',
  });

  it('says where the server was looked for and what to do, never "Failed to fetch"', () => {
    const text = describeError(network, 'Could not load your threads', { retrying: true });
    expect(text).toBe(
      "Could not load your threads: can't reach the Bubble server at this address. Is it running? Retrying…",
    );
    expect(describeError(new TypeError('Failed to fetch'), 'Your message was not sent')).not.toContain(
      'Failed to fetch',
    );
  });

  it('says when to try again when the server is busy, and passes other answers on', () => {
    const busy = new BubbleApiError({
      code: 'rate_limited',
      status: 429,
      retryable: true,
      message: 'slow down',
      details: { retryAfterSeconds: 3 },
    });
    expect(describeError(busy, 'Stop was not recorded')).toBe(
      'Stop was not recorded: the server is busy. Try again in 3 s.',
    );
    const conflict = new BubbleApiError({ code: 'conflict', status: 409, retryable: false, message: 'id taken' });
    expect(describeError(conflict, 'Could not create the bot')).toBe('Could not create the bot: id taken');
  });
});
