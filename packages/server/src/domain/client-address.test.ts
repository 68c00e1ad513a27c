import { describe, expect, it } from 'vitest';
import { canonicalIp, clientAddress, NO_TRUSTED_PROXIES, parseTrustedProxies } from './client-address.js';

const trusted = (text: string) => {
  const parsed = parseTrustedProxies(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.proxies;
};

describe('parseTrustedProxies', () => {
  const list = trusted(' 127.0.0.1 , ::1,10.0.0.0/8,fd00::/8,::ffff:192.168.0.0/112, 2001:db8::/32');
  it.each([
    ['127.0.0.1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['127.0.0.2', false],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::2', false],
    ['10.255.1.2', true],
    ['11.0.0.1', false],
    ['fd12:3456::1', true],
    ['FD00::1', true],
    ['fe80::1', false],
    ['192.168.3.4', true],
    ['192.169.0.1', false],
    ['2001:db8:ffff::1', true],
    ['2001:db9::1', false],
    ['not an address', false],
  ])('%s is trusted: %s', (address, is) => {
    expect(list.has(address)).toBe(is);
  });

  it('keeps the entries as given, trimmed', () => {
    expect(list.entries).toEqual([
      '127.0.0.1',
      '::1',
      '10.0.0.0/8',
      'fd00::/8',
      '::ffff:192.168.0.0/112',
      '2001:db8::/32',
    ]);
  });

  it.each(['', '   '])('%j is no proxy at all', (text) => {
    expect(parseTrustedProxies(text)).toEqual({ ok: true, proxies: NO_TRUSTED_PROXIES });
  });

  it.each([
    ['127.0.0.1,', '"" is empty: write addresses or CIDR ranges separated by commas'],
    ['127.0.0.1;::1', '"127.0.0.1;::1" is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8'],
    ['localhost', '"localhost" is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8'],
    ['256.0.0.1', '"256.0.0.1" is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8'],
    ['fe80::1%eth0', '"fe80::1%eth0" is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8'],
    ['10.0.0.0/', '"10.0.0.0/" has no prefix length after the "/" (such as /8 or /64)'],
    ['10.0.0.0/x', '"10.0.0.0/x" has no prefix length after the "/" (such as /8 or /64)'],
    ['10.0.0.0/33', '"10.0.0.0/33" has a prefix length out of range (0 to 32)'],
    ['fd00::/129', '"fd00::/129" has a prefix length out of range (0 to 128)'],
    [
      '::ffff:10.0.0.0/64',
      '"::ffff:10.0.0.0/64" has a prefix length out of range (96 to 128 for an IPv4-mapped range)',
    ],
  ])('%j is refused: %s', (text, error) => {
    expect(parseTrustedProxies(text)).toEqual({ ok: false, error });
  });
});

describe('canonicalIp', () => {
  it.each([
    ['10.0.0.1', { address: '10.0.0.1', family: 'ipv4' }],
    [' 10.0.0.1 ', { address: '10.0.0.1', family: 'ipv4' }],
    ['::ffff:10.0.0.1', { address: '10.0.0.1', family: 'ipv4' }],
    ['2001:DB8::1', { address: '2001:db8::1', family: 'ipv6' }],
    ['fe80::1%eth0', { address: 'fe80::1', family: 'ipv6' }],
    ['10.0.0.1:80', null],
    ['[::1]', null],
    ['', null],
    ['unknown', null],
  ])('%j is %j', (text, ip) => {
    expect(canonicalIp(text)).toEqual(ip);
  });
});

describe('clientAddress', () => {
  const proxies = trusted('127.0.0.1,::1,10.0.0.0/8');
  it.each([
    // From an untrusted peer the header is ignored.
    ['192.0.2.7', '198.51.100.1', NO_TRUSTED_PROXIES, '192.0.2.7'],
    ['192.0.2.7', '198.51.100.1', proxies, '192.0.2.7'],
    ['::ffff:192.0.2.7', '198.51.100.1', proxies, '192.0.2.7'],
    ['127.0.0.1', '198.51.100.1', NO_TRUSTED_PROXIES, '127.0.0.1'],
    // From a trusted peer: the right-most entry that is not a trusted proxy.
    ['127.0.0.1', '198.51.100.1', proxies, '198.51.100.1'],
    ['::ffff:127.0.0.1', '198.51.100.1', proxies, '198.51.100.1'],
    ['::1', '2001:db8::5', proxies, '2001:db8::5'],
    ['127.0.0.1', '203.0.113.9, 198.51.100.1', proxies, '198.51.100.1'],
    ['127.0.0.1', '198.51.100.1, 10.1.1.1', proxies, '198.51.100.1'],
    ['127.0.0.1', '198.51.100.1,10.1.1.1,127.0.0.1', proxies, '198.51.100.1'],
    ['127.0.0.1', ['203.0.113.9', '198.51.100.1, 10.1.1.1'], proxies, '198.51.100.1'],
    ['127.0.0.1', '::ffff:198.51.100.1', proxies, '198.51.100.1'],
    ['127.0.0.1', '2001:DB8::5', proxies, '2001:db8::5'],
    // What a client wrote left of the address its proxy added cannot matter, not even garbage.
    ['127.0.0.1', '127.0.0.1, 198.51.100.1', proxies, '198.51.100.1'],
    ['127.0.0.1', 'garbage, , 198.51.100.1', proxies, '198.51.100.1'],
    // Every entry a trusted proxy: the farthest one.
    ['127.0.0.1', '10.2.2.2, 127.0.0.1', proxies, '10.2.2.2'],
    // No header, or an empty one: the peer.
    ['127.0.0.1', undefined, proxies, '127.0.0.1'],
    ['127.0.0.1', '', proxies, '127.0.0.1'],
    ['127.0.0.1', ' , ', proxies, '127.0.0.1'],
    // A malformed entry where the walk reaches it counts as the peer.
    ['127.0.0.1', 'garbage', proxies, '127.0.0.1'],
    ['127.0.0.1', '198.51.100.1, garbage', proxies, '127.0.0.1'],
    ['127.0.0.1', '198.51.100.1, 10.1.1.1, ', proxies, '127.0.0.1'],
    ['127.0.0.1', '198.51.100.1:4711', proxies, '127.0.0.1'],
    ['127.0.0.1', '[2001:db8::5]', proxies, '127.0.0.1'],
    ['127.0.0.1', 'garbage, 10.1.1.1', proxies, '127.0.0.1'],
    // A peer Node could not name.
    [undefined, '198.51.100.1', proxies, undefined],
  ] as const)('peer %s, X-Forwarded-For %j (%#): %s', (peer, header, list, address) => {
    expect(clientAddress(peer, header as string | string[] | undefined, list)).toBe(address);
  });
});
