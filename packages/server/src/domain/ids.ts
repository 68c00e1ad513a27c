import { randomBytes, randomInt, randomUUID } from 'node:crypto';

const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function randomLowerAlnum(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += LOWER_ALNUM[randomInt(LOWER_ALNUM.length)];
  return out;
}

/** `th_` and 12 lowercase alphanumerics, e.g. `th_7k2m9q4x1b3c`. */
export const newThreadId = (): string => `th_${randomLowerAlnum(12)}`;

/** The parent's id, `.sub-`, then groups of 5 and 3, e.g. `th_7k2m9q4x1b3c.sub-a8f3k-2q9`. */
export const newSubthreadId = (parentThreadId: string): string =>
  `${parentThreadId}.sub-${randomLowerAlnum(5)}-${randomLowerAlnum(3)}`;

/** `inst_` and 8 lowercase alphanumerics: one serve process on a shared database, new at every start. */
export const newInstanceId = (): string => `inst_${randomLowerAlnum(8)}`;

export const newTokenId = (): string => `tok_${randomBytes(12).toString('base64url')}`;
/** `ev_` and a random UUID's 32 hex digits (randomUUID draws from a buffered entropy pool: cheap on the append path). */
export const newEventId = (): string => `ev_${randomUUID().replace(/-/g, '')}`;

// Request ids only need to be unique within this process's logs: a random prefix and a counter.
const requestIdPrefix = `req_${randomBytes(4).toString('hex')}`;
let requestCounter = 0;
export const newRequestId = (): string => `${requestIdPrefix}${(requestCounter++).toString(36).padStart(6, '0')}`;
