import { randomInt } from 'node:crypto';
import { PRINCIPAL_ID_PATTERN, SYSTEM_PRINCIPAL_ID, sanitizeDisplayName } from '@bubble/protocol';

/** The claims of an identity provider's token that name a person. */
export interface IdentityClaims {
  sub: string;
  preferred_username?: unknown;
  nickname?: unknown;
  email?: unknown;
  name?: unknown;
}

const MAX_ID_LENGTH = 64;
/** The last numbered id `principalIdCandidates` offers (`alice`, `alice-2` … `alice-9`) before random ones. */
export const LAST_NUMBERED_CANDIDATE = 9;
/** How many random ids follow the numbered ones (each `base-` and RANDOM_SUFFIX_DIGITS random digits). */
export const RANDOM_CANDIDATES = 4;
/** 10^12 ids per base: far more than anyone could create as bots to squat them all. */
export const RANDOM_SUFFIX_DIGITS = 12;

/**
 * Text fitted to the principal id pattern `^[a-z0-9][a-z0-9._-]{1,63}$`: accents dropped
 * (`é` → `e`), lower-cased, every run of other characters turned into one `-`, leading
 * punctuation and trailing `.`, `_`, `-` trimmed, cut at 64. Null when fewer than two
 * characters are left (`李` or `J` say too little to be an id).
 */
export function fitPrincipalId(text: string): string | null {
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  const fitted = trimEnd(folded.slice(0, MAX_ID_LENGTH));
  return PRINCIPAL_ID_PATTERN.test(fitted) ? fitted : null;
}

const trimEnd = (id: string): string => id.replace(/[._-]+$/, '');
const claimText = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/**
 * The id a person's principal is created with (protocol.md, Principals): the first of
 * `preferred_username`, `nickname` and the local part of `email` that fits the id pattern;
 * failing all three, the subject itself (`google-oauth2|1234` → `google-oauth2-1234`),
 * and failing that, `user`.
 */
export function principalIdBase(claims: IdentityClaims): string {
  const email = claimText(claims.email);
  const local =
    email === undefined
      ? undefined
      : email.slice(0, email.lastIndexOf('@') === -1 ? email.length : email.lastIndexOf('@'));
  for (const candidate of [claimText(claims.preferred_username), claimText(claims.nickname), local, claims.sub]) {
    if (candidate === undefined) continue;
    const fitted = fitPrincipalId(candidate);
    if (fitted !== null && fitted !== SYSTEM_PRINCIPAL_ID) return fitted;
  }
  return 'user';
}

/**
 * The ids to try, in order, for a new principal whose base is `base`: the base itself, then
 * `base-2` … `base-9`, then a few `base-<12 random digits>` (the base shortened to keep within
 * 64 characters). `system` is never offered. The numbered ones are few on purpose: anyone may
 * create bots, so anyone can take `alice` … `alice-9` before Alice first signs in; the random
 * ones cannot all be taken (10^12 per base), so a first sign-in always finds a free id. A list,
 * not a generator: the store's write job that walks it may run twice (group commit).
 */
export function principalIdCandidates(base: string, randomDigits: () => string = randomSuffixDigits): string[] {
  const suffixed = (suffix: string) => `${trimEnd(base.slice(0, MAX_ID_LENGTH - suffix.length))}${suffix}`;
  const candidates = base === SYSTEM_PRINCIPAL_ID ? [] : [base];
  for (let n = 2; n <= LAST_NUMBERED_CANDIDATE; n += 1) candidates.push(suffixed(`-${n}`));
  for (let i = 0; i < RANDOM_CANDIDATES; i += 1) candidates.push(suffixed(`-${randomDigits()}`));
  return candidates;
}

function randomSuffixDigits(): string {
  let digits = '';
  while (digits.length < RANDOM_SUFFIX_DIGITS) digits += String(randomInt(0, 1_000_000)).padStart(6, '0');
  return digits.slice(0, RANDOM_SUFFIX_DIGITS);
}

/**
 * The displayName a token's `name` claim gives, sanitized rather than refused (the person cannot
 * change what their identity provider sends): NFC, controls, line breaks and invisible bidi or
 * zero-width characters turned into spaces, whitespace collapsed, trimmed, at most 64 characters.
 * Null without one, or when nothing is left: the principal's id then stands for its name.
 */
export function displayNameFromClaims(claims: IdentityClaims): string | null {
  const name = claimText(claims.name);
  return name === undefined ? null : sanitizeDisplayName(name);
}
