import { describe, expect, it } from 'vitest';
import { askUserAnswers } from './tool-gate.js';

const input = {
  questions: [
    { question: 'Which color?', header: 'Color', options: [] },
    { question: 'Which size?', header: 'Size', options: [] },
  ],
};

describe('askUserAnswers', () => {
  it.each<[string, unknown, Record<string, string> | undefined]>([
    ['one string answers every question', 'Blue', { 'Which color?': 'Blue', 'Which size?': 'Blue' }],
    [
      'an object of answers',
      { 'Which color?': 'Blue', 'Which size?': 'L' },
      { 'Which color?': 'Blue', 'Which size?': 'L' },
    ],
    ['an object with an answers field', { answers: { 'Which color?': 'Red' } }, { 'Which color?': 'Red' }],
    ['non-string values are left out', { 'Which color?': 'Red', n: 3 }, { 'Which color?': 'Red' }],
    ['an empty string', '  ', undefined],
    ['a list', ['Blue'], undefined],
    ['a number', 4, undefined],
  ])('%s', (_name, output, expected) => {
    expect(askUserAnswers(input, output)).toEqual(expected);
  });

  it('a string cannot answer when there are no questions', () => {
    expect(askUserAnswers({}, 'Blue')).toBeUndefined();
  });
});
