import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { EVENT_FRAME_SUFFIX, errorFrame, eventFramePrefix, parseClientFrame, serializeFrame } from './frame-codec.js';

describe('parseClientFrame', () => {
  it.each([
    ['{"type":"client.auth","token":"t"}', { type: 'client.auth', token: 't' }],
    [
      '{"type":"subscribe","id":"s1","threadId":"th_1","afterSeq":4}',
      { type: 'subscribe', id: 's1', threadId: 'th_1', afterSeq: 4 },
    ],
    ['{"type":"subscribe_grants","id":"g"}', { type: 'subscribe_grants', id: 'g' }],
    ['{"type":"unsubscribe","id":"s1"}', { type: 'unsubscribe', id: 's1' }],
    ['{"type":"ping"}', { type: 'ping' }],
  ])('accepts %s', (text, frame) => {
    expect(parseClientFrame(text)).toEqual({ ok: true, frame });
  });

  it.each([
    ['not json', 'not valid JSON', undefined],
    ['', 'not valid JSON', undefined],
    ['[1,2]', 'JSON object', undefined],
    ['null', 'JSON object', undefined],
    ['42', 'JSON object', undefined],
    ['"ping"', 'JSON object', undefined],
    ['{}', 'unknown frame type', undefined],
    ['{"type":7,"id":"x"}', 'unknown frame type', 'x'],
    ['{"type":"hello","id":"x"}', 'unknown frame type "hello"', 'x'],
    ['{"type":"subscribe","id":"s1"}', 'invalid subscribe frame: threadId', 's1'],
    ['{"type":"subscribe","id":"s1","threadId":"th","afterSeq":-1}', 'afterSeq', 's1'],
    ['{"type":"subscribe","id":"s1","threadId":"th","afterSeq":1.5}', 'afterSeq', 's1'],
    ['{"type":"subscribe","threadId":"th","afterSeq":0}', 'invalid subscribe frame: id', undefined],
    ['{"type":"subscribe","id":"","threadId":"th"}', 'invalid subscribe frame: id', undefined],
    ['{"type":"subscribe_grants"}', 'invalid subscribe_grants frame', undefined],
    ['{"type":"unsubscribe","id":5}', 'invalid unsubscribe frame', undefined],
    ['{"type":"client.auth"}', 'invalid client.auth frame: token', undefined],
    ['{"type":"subscribe","id":"s1","threadId":"th_\\u0000"}', 'frame field threadId has a NUL character', 's1'],
    ['{"type":"subscribe","id":"s\\ud800","threadId":"th"}', 'frame field id has a lone UTF-16 surrogate', undefined],
    ['{"type":"client.auth","token":"t","x":{"\\u0000":1}}', 'frame field x."\\u0000" has a NUL', undefined],
  ])('refuses %s', (text, messagePart, id) => {
    const result = parseClientFrame(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('invalid_request');
    expect(result.error.message).toContain(messagePart);
    expect(result.id).toBe(id);
  });
});

describe('event frames', () => {
  it('builds the same text as serializing the whole frame', () => {
    const event: EventEnvelope = {
      id: 'ev_1',
      threadId: 'th_1',
      seq: 3,
      type: 'acme.note',
      principalId: 'alice',
      data: { text: 'quote " and \\ and \u2028' },
      createdAt: '2026-11-29T10:00:00.000Z',
    } as EventEnvelope;
    const id = 'sub "1"';
    const built = eventFramePrefix(id) + JSON.stringify(event) + EVENT_FRAME_SUFFIX;
    expect(built).toBe(serializeFrame({ type: 'event', id, event }));
    expect(JSON.parse(built)).toEqual({ type: 'event', id, event });
  });

  it('builds error frames in the protocol error body shape', () => {
    expect(JSON.parse(errorFrame('forbidden', 'no', 's1'))).toEqual({
      type: 'error',
      id: 's1',
      error: { code: 'forbidden', message: 'no', details: {} },
    });
    expect(JSON.parse(errorFrame('invalid_request', 'bad'))).toEqual({
      type: 'error',
      error: { code: 'invalid_request', message: 'bad', details: {} },
    });
  });
});
