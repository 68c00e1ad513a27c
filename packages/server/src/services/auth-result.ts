import type { Principal } from '@bubble/protocol';

/** What checking a bearer gives: the principal it stands for. */
export interface Authenticated {
  principal: Principal;
  /** The local token the caller used; null for an identity provider's JWT. */
  tokenId: string | null;
  /** When the credential stops being accepted (ms since the epoch): a JWT's `exp` plus the clock tolerance. Absent for local tokens. */
  acceptedUntil?: number;
  /** When a JWT was issued (its `iat`, in ms), for ending a person's JWTs issued before a time; absent for local tokens. */
  issuedAt?: number;
}

/** A bearer that does not authenticate, and why: the 401's message, the 4001's reason. */
export interface AuthRefusal {
  refused: true;
  message: string;
  /** Whether it takes one from the address's failed-authentication budget (a wrong token does; an identity provider that cannot be reached does not). */
  countsAsFailure: boolean;
  /** Set when the bearer could not be checked rather than was refused: the 401 carries it as `details.reason`, so a client keeps its session. */
  reason?: 'identity_provider_unreachable';
}

export const isRefusal = (value: unknown): value is AuthRefusal =>
  typeof value === 'object' && value !== null && (value as { refused?: unknown }).refused === true;
