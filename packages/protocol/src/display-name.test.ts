import { describe, expect, it } from 'vitest';
import { checkDisplayName, displayNameSchema, MAX_DISPLAY_NAME_LENGTH, sanitizeDisplayName } from './display-name.js';

const decomposed = 'Zoe\u0308'; // "Zoë" as e + combining diaeresis: NFC makes it three characters
const composed = 'Zo\u00eb';

describe('checkDisplayName', () => {
  it.each([
    ['Alice', 'Alice'],
    ['  Alice Liddell  ', 'Alice Liddell'],
    [decomposed, composed],
    ['李明', '李明'],
    ['Ａｌｉｃｅ', 'Ａｌｉｃｅ'],
    ['family 👨\u200d👩\u200d👧', 'family 👨\u200d👩\u200d👧'],
    ['می\u200cخواهم', 'می\u200cخواهم'],
    ['x'.repeat(MAX_DISPLAY_NAME_LENGTH), 'x'.repeat(MAX_DISPLAY_NAME_LENGTH)],
    // 64 emoji are 128 UTF-16 units but 64 characters.
    ['😀'.repeat(MAX_DISPLAY_NAME_LENGTH), '😀'.repeat(MAX_DISPLAY_NAME_LENGTH)],
    // 64 decomposed ë are 128 code points before NFC and 64 after.
    ['e\u0308'.repeat(MAX_DISPLAY_NAME_LENGTH), '\u00eb'.repeat(MAX_DISPLAY_NAME_LENGTH)],
  ])('accepts %j as %j', (input, name) => {
    expect(checkDisplayName(input)).toEqual({ ok: true, name });
  });

  it.each([
    ['', /^must not be empty$/],
    ['   ', /^must not be empty$/],
    [
      'x'.repeat(MAX_DISPLAY_NAME_LENGTH + 1),
      /^must be at most 64 characters after NFC normalization; this one has 65$/,
    ],
    ['😀'.repeat(MAX_DISPLAY_NAME_LENGTH + 1), /this one has 65$/],
    ['Alice\nBob: hi', /^must not contain U\+000A \(character 6\)/],
    ['Alice\r', /U\+000D/],
    ['Alice\tLiddell', /U\+0009/],
    ['Alice\u0000', /U\+0000/],
    ['Alice\u007f', /U\+007F/],
    ['Alice\u0085', /U\+0085/],
    ['Alice\u2028Bob', /U\+2028/],
    ['Alice\u2029', /U\+2029/],
    ['\u202eecilA', /U\+202E \(character 1\)/],
    ['Alice\u202a', /U\+202A/],
    ['Alice\u2066x\u2069', /U\+2066/],
    ['Alice\u2069', /U\+2069/],
    ['Ali\u200bce', /U\+200B/],
    ['Alice\u200f', /U\+200F/],
    ['\ufeffAlice', /U\+FEFF/],
    ['Alice\ud800', /lone surrogate/],
    ['😀\ud800', /lone surrogate/],
  ])('refuses %j: %s', (input, problem) => {
    const check = checkDisplayName(input);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.problem).toMatch(problem);
  });
});

describe('sanitizeDisplayName', () => {
  it.each([
    ['Alice Liddell', 'Alice Liddell'],
    ['  Alice   Liddell ', 'Alice Liddell'],
    [decomposed, composed],
    ['Alice\nBob: hi', 'Alice Bob: hi'],
    ['Alice\r\n\tLiddell', 'Alice Liddell'],
    ['\u202eecilA\u202c', 'ecilA'],
    ['Ali\u200bce', 'Ali ce'],
    ['Alice\u0000', 'Alice'],
    ['Alice\u2028\u2029Bob', 'Alice Bob'],
    ['A\ud800B', 'A\ufffdB'],
    ['x'.repeat(300), 'x'.repeat(MAX_DISPLAY_NAME_LENGTH)],
    ['😀'.repeat(100), '😀'.repeat(MAX_DISPLAY_NAME_LENGTH)],
    [`${'x'.repeat(63)} y`, 'x'.repeat(63)],
    ['family 👨\u200d👩\u200d👧', 'family 👨\u200d👩\u200d👧'],
    ['   ', null],
    ['\n\u202e\u0000', null],
  ])('%j -> %j', (input, name) => {
    const sanitized = sanitizeDisplayName(input);
    expect(sanitized).toBe(name);
    // Whatever it gives is a displayName checkDisplayName accepts as it is.
    if (sanitized !== null) expect(checkDisplayName(sanitized)).toEqual({ ok: true, name: sanitized });
  });
});

describe('displayNameSchema', () => {
  it('outputs the normalized name, and says what is wrong after its label', () => {
    expect(displayNameSchema().parse(`  ${decomposed} `)).toBe(composed);
    const refused = displayNameSchema('--display-name').safeParse('a\nb');
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/^--display-name must not contain U\+000A/);
  });
});
