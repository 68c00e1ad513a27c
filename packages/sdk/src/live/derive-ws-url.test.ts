import { describe, expect, it } from 'vitest';
import { deriveWsUrl } from './bubble-live.js';

describe('deriveWsUrl', () => {
  it.each([
    ['http://127.0.0.1:7777', 'ws://127.0.0.1:7777/v1/ws'],
    ['http://127.0.0.1:7777/', 'ws://127.0.0.1:7777/v1/ws'],
    ['https://bubble.example.com', 'wss://bubble.example.com/v1/ws'],
    ['https://example.com/bubble/', 'wss://example.com/bubble/v1/ws'],
  ])('%s -> %s', (url, wsUrl) => {
    expect(deriveWsUrl(url)).toBe(wsUrl);
  });
});
