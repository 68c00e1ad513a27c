import { describe, expect, it } from 'vitest';
import { isSameEvent } from './same-event.js';

describe('isSameEvent', () => {
  it.each([
    ['identical', { type: 'x.y', data: { a: 1 } }, { type: 'x.y', data: { a: 1 } }, true],
    ['key order ignored', { type: 'x.y', data: { a: 1, b: [1, 2] } }, { type: 'x.y', data: { b: [1, 2], a: 1 } }, true],
    ['different type', { type: 'x.y', data: { a: 1 } }, { type: 'x.z', data: { a: 1 } }, false],
    ['different value', { type: 'x.y', data: { a: 1 } }, { type: 'x.y', data: { a: 2 } }, false],
    ['array order matters', { type: 'x.y', data: { a: [1, 2] } }, { type: 'x.y', data: { a: [2, 1] } }, false],
    ['extra key', { type: 'x.y', data: { a: 1 } }, { type: 'x.y', data: { a: 1, b: null } }, false],
    ['nested', { type: 'x.y', data: { a: { b: { c: 'd' } } } }, { type: 'x.y', data: { a: { b: { c: 'e' } } } }, false],
    ['array vs object', { type: 'x.y', data: { a: [] } }, { type: 'x.y', data: { a: {} } }, false],
  ])('%s', (_n, a, b, expected) => {
    expect(isSameEvent(a, b)).toBe(expected);
  });
});
