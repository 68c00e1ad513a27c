import { describe, expect, it } from 'vitest';
import { describeJsonProblem, formatPath, jsonProblem, MAX_JSON_DEPTH, textProblem } from './text-rules.js';

describe('textProblem', () => {
  it.each([
    ['', null],
    ['plain', null],
    ['ünïcødé, 李明, emoji 😀 (a pair)', null],
    ['\u0000', 'nul'],
    ['a\u0000b', 'nul'],
    ['\ud800', 'lone_surrogate'],
    ['a\udfffb', 'lone_surrogate'],
    ['\ude00\ud83d', 'lone_surrogate'],
    ['😀'.slice(0, 1), 'lone_surrogate'],
    ['\ud800\u0000', 'nul'],
    ['\u0001\u001f\u007f', null],
  ])('%j -> %j', (text, problem) => {
    expect(textProblem(text)).toBe(problem);
  });
});

describe('jsonProblem', () => {
  const nested = (levels: number): unknown => (levels === 0 ? 1 : [nested(levels - 1)]);
  it.each([
    [{ a: 'x', b: [1, true, null, { c: 'y' }] }, null],
    ['a\u0000', { problem: 'nul', path: [] }],
    [{ title: 'a\u0000' }, { problem: 'nul', path: ['title'] }],
    [{ data: { 'k\u0000': 1 } }, { problem: 'nul', path: ['data', 'k\u0000'] }],
    [{ data: { '\udc00': 'fine' } }, { problem: 'lone_surrogate', path: ['data', '\udc00'] }],
    [{ data: { a: [1, [{ b: [true, '\ud800'] }]] } }, { problem: 'lone_surrogate', path: ['data', 'a', 1, 0, 'b', 1] }],
    [{ events: [{ data: {} }, { data: { t: '\u0000' } }] }, { problem: 'nul', path: ['events', 1, 'data', 't'] }],
    [{ n: Number.POSITIVE_INFINITY }, { problem: 'non_finite_number', path: ['n'] }],
    [nested(MAX_JSON_DEPTH), null],
    [nested(MAX_JSON_DEPTH + 1), { problem: 'too_deep', path: Array(MAX_JSON_DEPTH).fill(0) }],
    // The first problem in document order is the one named.
    [
      { a: 'ok', b: '\u0000', c: '\ud800' },
      { problem: 'nul', path: ['b'] },
    ],
  ])('%j -> %j', (value, found) => {
    expect(jsonProblem(value, MAX_JSON_DEPTH)).toEqual(found);
  });
});

describe('formatPath', () => {
  it.each([
    [[], ''],
    [['title'], 'title'],
    [['events', 1, 'data', 'text'], 'events.1.data.text'],
    [['data', 'k\u0000'], 'data."k\\u0000"'],
    [['data', '\udc00'], 'data."\\udc00"'],
    [['data', 'a.b', 'with space'], 'data."a.b"."with space"'],
  ])('%j -> %j', (path, text) => {
    expect(formatPath(path)).toBe(text);
  });
});

describe('describeJsonProblem', () => {
  it('names the field and what is wrong with it', () => {
    expect(describeJsonProblem({ problem: 'nul', path: ['data', 'text'] }, 'request body')).toEqual({
      message: expect.stringMatching(/^request body field data\.text has a NUL character \(U\+0000/),
      details: { problem: 'nul', field: 'data.text' },
    });
    expect(describeJsonProblem({ problem: 'lone_surrogate', path: [] }, 'frame').message).toMatch(
      /^frame has a lone UTF-16 surrogate/,
    );
  });
});
