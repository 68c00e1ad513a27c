import { canonicalIp, expandIpv6 } from './client-address.js';
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
  const ip = canonicalIp(address);
  if (ip === null) return address.split('%', 1)[0]!.toLowerCase();
  if (ip.family === 'ipv4') return ip.address;
  return `${expandIpv6(ip.address)!.slice(0, 4).join(':')}::/64`;
}
