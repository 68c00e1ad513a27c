import { BlockList, isIP } from 'node:net';

/**
 * The proxies whose `X-Forwarded-For` the server believes (protocol.md,
 * "Limits"): addresses and CIDR ranges, IPv4 and IPv6. An IPv4 address
 * written IPv4-mapped (`::ffff:127.0.0.1`) is the IPv4 address, in the list
 * and in what is checked against it.
 */
export interface TrustedProxies {
  /** The list as given, each entry trimmed. */
  readonly entries: readonly string[];
  has(address: string): boolean;
}

export type TrustedProxiesParse = { ok: true; proxies: TrustedProxies } | { ok: false; error: string };

export const NO_TRUSTED_PROXIES: TrustedProxies = Object.freeze({ entries: Object.freeze([]), has: () => false });

/**
 * `--trusted-proxies` / `BUBBLE_TRUSTED_PROXIES`: a comma-separated list of
 * addresses and CIDR ranges (`127.0.0.1,::1,10.0.0.0/8,fd00::/8`); empty (or
 * only blanks) is none. Any entry that is not one is an error naming it.
 */
export function parseTrustedProxies(text: string): TrustedProxiesParse {
  if (text.trim() === '') return { ok: true, proxies: NO_TRUSTED_PROXIES };
  return trustedProxiesOf(text.split(','));
}

/** The same from a list of entries (the library's `trustedProxies` option). */
export function trustedProxiesOf(list: readonly string[]): TrustedProxiesParse {
  const blocks = new BlockList();
  const entries: string[] = [];
  for (const raw of list) {
    const entry = raw.trim();
    const problem = addEntry(blocks, entry);
    if (problem !== null) return { ok: false, error: `${JSON.stringify(entry)} ${problem}` };
    entries.push(entry);
  }
  if (entries.length === 0) return { ok: true, proxies: NO_TRUSTED_PROXIES };
  return {
    ok: true,
    proxies: Object.freeze({
      entries: Object.freeze(entries),
      has: (address: string) => {
        const ip = canonicalIp(address);
        return ip !== null && blocks.check(ip.address, ip.family);
      },
    }),
  };
}

/**
 * The client address of a request (protocol.md, "Limits"): the TCP peer,
 * unless the peer is a trusted proxy; then the right-most `X-Forwarded-For`
 * entry that is not itself a trusted proxy (the left-most when all are, the
 * peer when there is none). Only the entries walked over are judged: one that
 * is not an address there makes the answer the peer, while whatever a client
 * wrote to the left of the address its proxy added cannot matter. IPv4-mapped
 * IPv6 is answered as IPv4, and an IPv6 zone is dropped.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: TrustedProxies,
): string | undefined {
  if (peer === undefined) return undefined;
  const peerIp = canonicalIp(peer);
  if (peerIp === null) return peer;
  if (forwardedFor === undefined || !trusted.has(peerIp.address)) return peerIp.address;
  const entries = (typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',')).split(',');
  if (entries.every((entry) => entry.trim() === '')) return peerIp.address;
  let farthest = peerIp.address;
  for (let i = entries.length - 1; i >= 0; i -= 1) {
    const ip = canonicalIp(entries[i]!);
    if (ip === null) return peerIp.address;
    if (!trusted.has(ip.address)) return ip.address;
    farthest = ip.address;
  }
  return farthest;
}

/** An address in one spelling: trimmed, without an IPv6 zone, IPv4-mapped IPv6 as IPv4; null if it is not one. */
export function canonicalIp(text: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  const bare = text.trim().split('%', 1)[0]!;
  const version = isIP(bare);
  if (version === 4) return { address: bare, family: 'ipv4' };
  if (version !== 6) return null;
  const lower = bare.toLowerCase();
  const groups = expandIpv6(lower);
  if (groups?.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff') {
    const [high, low] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return { address: [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.'), family: 'ipv4' };
  }
  return { address: lower, family: 'ipv6' };
}

/** Adds one list entry (an address or `address/prefix`); what is wrong with it, or null. */
function addEntry(blocks: BlockList, entry: string): string | null {
  if (entry === '') return 'is empty: write addresses or CIDR ranges separated by commas';
  const slash = entry.indexOf('/');
  const ip = canonicalIp(slash === -1 ? entry : entry.slice(0, slash));
  if (ip === null || entry.includes('%')) return 'is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8';
  if (slash === -1) {
    blocks.addAddress(ip.address, ip.family);
    return null;
  }
  const prefixText = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return 'has no prefix length after the "/" (such as /8 or /64)';
  const mapped = ip.family === 'ipv4' && isIP(entry.slice(0, slash)) === 6;
  // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range it maps (10.0.0.0/8).
  const prefix = Number(prefixText) - (mapped ? 96 : 0);
  const max = ip.family === 'ipv4' ? 32 : 128;
  if (prefix < 0 || prefix > max)
    return `has a prefix length out of range (${mapped ? '96 to 128 for an IPv4-mapped range' : `0 to ${max}`})`;
  blocks.addSubnet(ip.address, prefix, ip.family);
  return null;
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros; null if it is not one. */
export function expandIpv6(address: string): string[] | null {
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
