import { z } from 'zod';

/** A displayName is 1 to this many characters (Unicode code points), after NFC normalization. */
export const MAX_DISPLAY_NAME_LENGTH = 64;

/**
 * What a displayName may not hold: control characters (Unicode Cc: `\n`, `\r`, tab, NUL, DEL, C1,
 * NEL), the line and paragraph separators U+2028 and U+2029, and invisible format characters that
 * reorder or hide text: the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069),
 * the marks U+200E and U+200F, zero-width space U+200B, word joiner and invisible operators
 * U+2060–U+2064, the deprecated format characters U+206A–U+206F, and U+FEFF. A line break would let
 * a name fake a second speaker wherever names are printed one per line; an override would show a
 * name other than the one stored. Zero-width non-joiner and joiner (U+200C, U+200D) stay allowed:
 * scripts such as Persian and emoji sequences need them.
 */
const FORBIDDEN = /[\p{Cc}\u2028\u2029\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]/u;
const FORBIDDEN_ALL = new RegExp(FORBIDDEN.source, 'gu');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

export type DisplayNameCheck = { ok: true; name: string } | { ok: false; problem: string };

const codePoints = (text: string): number => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

const hex = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * A displayName as protocol.md's Text rule has it: the name in NFC, surrounding whitespace trimmed,
 * when it is 1 to 64 characters long and holds none of the characters above; else what is wrong,
 * phrased to follow the field's name (`displayName must …`).
 */
export function checkDisplayName(input: string): DisplayNameCheck {
  if (LONE_SURROGATE.test(input)) return { ok: false, problem: 'must be valid Unicode (it has a lone surrogate)' };
  const normalized = input.normalize('NFC');
  const bad = FORBIDDEN.exec(normalized);
  if (bad !== null) {
    return {
      ok: false,
      problem: `must not contain ${hex(bad[0])} (character ${codePoints(normalized.slice(0, bad.index)) + 1}): control characters, line breaks and invisible bidi or zero-width characters are not allowed`,
    };
  }
  const name = normalized.trim();
  const length = codePoints(name);
  if (length === 0) return { ok: false, problem: 'must not be empty' };
  if (length > MAX_DISPLAY_NAME_LENGTH) {
    return {
      ok: false,
      problem: `must be at most ${MAX_DISPLAY_NAME_LENGTH} characters after NFC normalization; this one has ${length}`,
    };
  }
  return { ok: true, name };
}

/**
 * A name from elsewhere (an identity provider's `name` claim) made into a displayName instead of
 * refused: lone surrogates become U+FFFD, then NFC, every forbidden character a space, runs of
 * whitespace one space, trimmed, cut to 64 characters. Null when nothing is left (the principal's
 * id then stands for its name).
 */
export function sanitizeDisplayName(input: string): string | null {
  const spaced = input
    .replace(LONE_SURROGATES, '\uFFFD')
    .normalize('NFC')
    .replace(FORBIDDEN_ALL, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  const name = Array.from(spaced).slice(0, MAX_DISPLAY_NAME_LENGTH).join('').normalize('NFC').trimEnd();
  return name === '' ? null : name;
}

/**
 * A displayName field: what `checkDisplayName` answers, as a zod schema that outputs the normalized
 * name. `label` starts each message (`--display-name` for a command line); without it the message
 * follows the field's path.
 */
export function displayNameSchema(label?: string) {
  return z.string().transform((value, ctx) => {
    const check = checkDisplayName(value);
    if (check.ok) return check.name;
    ctx.issues.push({
      code: 'custom',
      message: label === undefined ? check.problem : `${label} ${check.problem}`,
      input: value,
    });
    return z.NEVER;
  });
}
