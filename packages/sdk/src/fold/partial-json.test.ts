import { describe, expect, it } from 'vitest';
import { parsePartialJson, repairJson } from './partial-json.js';

describe('parsePartialJson', () => {
  it.each<[string, unknown]>([
    ['{"a":1}', { a: 1 }],
    ['', undefined],
    ['{', {}],
    ['{"comm', {}],
    ['{"command":', {}],
    ['{"command":"ls -', { command: 'ls -' }],
    ['{"a":1,', { a: 1 }],
    ['{"a":[1,2', { a: [1, 2] }],
    ['{"a":[1,2,', { a: [1, 2] }],
    ['{"a":tr', { a: true }],
    ['{"a":nu', { a: null }],
    ['{"a":-', {}],
    ['{"a":12.', { a: 12 }],
    ['{"a":"x\\', { a: 'x' }],
    ['{"a":"\\u00e', { a: '' }],
    ['[{"a":1},{"b"', [{ a: 1 }, {}]],
    ['"half a str', 'half a str'],
    ['{"a":{"b":{"c":"deep', { a: { b: { c: 'deep' } } }],
  ])('%j reads as %j', (text, value) => {
    expect(parsePartialJson(text)).toEqual(value);
  });

  it('closes what is open without touching what is complete', () => {
    expect(repairJson('{"a":[1,{"b":"c')).toBe('{"a":[1,{"b":"c"}]}');
    expect(repairJson('{"a":1}')).toBe('{"a":1}');
  });
});
