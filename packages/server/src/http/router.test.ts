import { describe, expect, it } from 'vitest';
import { BubbleError } from '../errors/bubble-error.js';
import { Router } from './router.js';

describe('Router', () => {
  const router = new Router<string>()
    .add('GET', '/v1/threads', 'list')
    .add('GET', '/v1/threads/:id', 'get')
    .add('GET', '/v1/threads/:id/artifacts/:name', 'artifact');

  it('matches literal and parameter segments, decoding parameters', () => {
    expect(router.match('GET', '/v1/threads')).toEqual({ handler: 'list', params: {} });
    expect(router.match('GET', '/v1/threads/th_a.sub-abcde-123')).toEqual({
      handler: 'get',
      params: { id: 'th_a.sub-abcde-123' },
    });
    expect(router.match('GET', '/v1/threads/t/artifacts/a%20b.md')).toEqual({
      handler: 'artifact',
      params: { id: 't', name: 'a b.md' },
    });
  });

  it('does not match other methods, lengths, or empty parameters', () => {
    expect(router.match('POST', '/v1/threads')).toBeNull();
    expect(router.match('GET', '/v1/threads/')).toBeNull();
    expect(router.match('GET', '/v1/threads/x/y')).toBeNull();
    expect(router.match('GET', '/v2/threads')).toBeNull();
  });

  it('answers a malformed escape with invalid_request', () => {
    expect(() => router.match('GET', '/v1/threads/%E0%A4%A')).toThrow(BubbleError);
  });
});
