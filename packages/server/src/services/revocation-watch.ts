import type { Logger } from 'pino';
import type { LiveBus } from '../live/live-bus.js';
import type { BubbleStore } from '../store/store.js';

const PAGE = 1000;

/**
 * Makes revocations committed by another process (the operator's `bubble-server principal
 * revoke-tokens` on the same database while the server runs) reach this one: every
 * `intervalMs` the revocation log is read from where it was last read, and what is new is
 * published as `tokens_revoked` (an entry without a token id, which ends a person's JWTs issued
 * before it, as `jwts_revoked`), exactly as this process's own revocations are. So the
 * authenticator's cache drops those credentials and their sockets close with 4003, at most one
 * interval (plus one store read) after the other process committed. Revocations made here are
 * published a second time, which changes nothing.
 */
export async function watchTokenRevocations(
  store: BubbleStore,
  bus: LiveBus,
  intervalMs: number,
  logger: Logger,
): Promise<{ stop(): void }> {
  let cursor = await store.tokenRevocationCursor();
  let reading = false;
  const read = async (): Promise<void> => {
    if (reading) return;
    reading = true;
    try {
      for (;;) {
        const page = await store.readTokenRevocationsAfter(cursor, PAGE);
        if (page.length === 0) break;
        cursor = page[page.length - 1]!.cursor;
        const byPrincipal = new Map<string, string[]>();
        const jwtCutoffs: Array<{ principalId: string; issuedBefore: string }> = [];
        for (const { principalId, tokenId, revokedAt } of page) {
          if (tokenId === null) jwtCutoffs.push({ principalId, issuedBefore: revokedAt });
          else byPrincipal.set(principalId, [...(byPrincipal.get(principalId) ?? []), tokenId]);
        }
        for (const [principalId, tokenIds] of byPrincipal)
          bus.publish({ kind: 'tokens_revoked', principalId, tokenIds });
        for (const { principalId, issuedBefore } of jwtCutoffs)
          bus.publish({ kind: 'jwts_revoked', principalId, issuedBefore });
        if (page.length < PAGE) break;
      }
    } catch (error) {
      logger.warn({ err: error }, 'reading the token revocation log failed; trying again');
    } finally {
      reading = false;
    }
  };
  const timer = setInterval(() => void read(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
