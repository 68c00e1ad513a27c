import type { Principal } from '@bubble/protocol';

/**
 * How two names are compared to tell whether one principal could pass for another: Unicode
 * compatibility forms folded (`Ａｌｉｃｅ` is `Alice`), case ignored, surrounding whitespace
 * trimmed and inner runs of whitespace counted as one space.
 */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().trim().replace(/\s+/g, ' ');
}

/**
 * The first principal among `others` (except `selfId`) whose displayName or id a bot named
 * `displayName` would look like, or null. A bot named "Alice" beside a person called Alice (or
 * with the id `alice`) is what this refuses.
 */
export function lookalikeOf(displayName: string, others: readonly Principal[], selfId: string): Principal | null {
  const key = nameKey(displayName);
  for (const other of others) {
    if (other.principalId === selfId) continue;
    if (nameKey(other.displayName) === key || nameKey(other.principalId) === key) return other;
  }
  return null;
}
