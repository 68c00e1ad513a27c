import type { Principal } from '@bubble/protocol';

/**
 * Whose budget a principal's requests and frames draw from: a bot's come out
 * of the human who created it (the first of its `ownerPrincipalIds`, the only
 * owner the API ever records), so minting bots never multiplies a person's
 * budget. A bot with no owner (only an operator could make one) is its own.
 */
export function budgetKeyOf(principal: Pick<Principal, 'principalId' | 'kind' | 'ownerPrincipalIds'>): string {
  if (principal.kind === 'bot') return principal.ownerPrincipalIds[0] ?? principal.principalId;
  return principal.principalId;
}

/**
 * The client address failed authentications are counted against: an IPv4
 * address (also when written IPv4-mapped, `::ffff:10.0.0.1`) as it is, an
 * IPv6 address by its /64 prefix, since one host is handed a whole /64 and
 * could otherwise draw a fresh budget per address.
 */
export function clientAddressKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const bare = address.split('%', 1)[0]!.toLowerCase();
  if (!bare.includes(':')) return bare;
  const groups = expandIpv6(bare);
  if (groups === null) return bare;
  if (groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') {
    const [high, low] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros; null if it is not one. */
function expandIpv6(address: string): string[] | null {
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  // A trailing dotted quad stands for two groups.
  const last = (halves.length === 2 ? tail : head).at(-1);
  if (last?.includes('.')) {
    const octets = last.split('.').map(Number);
    if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) return null;
    const list = halves.length === 2 ? tail : head;
    list.splice(-1, 1, ((octets[0]! << 8) | octets[1]!).toString(16), ((octets[2]! << 8) | octets[3]!).toString(16));
  }
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array.from({ length: halves.length === 2 ? missing : 0 }, () => '0'), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => g.replace(/^0+(?=.)/, ''));
}
