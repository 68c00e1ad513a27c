import { describe, expect, it } from 'vitest';
import { budgetKeyOf, clientAddressKey } from './rate-limit-keys.js';

describe('budgetKeyOf', () => {
  it.each([
    [{ principalId: 'alice', kind: 'human', ownerPrincipalIds: [] }, 'alice'],
    [{ principalId: 'bot-a', kind: 'bot', ownerPrincipalIds: ['alice'] }, 'alice'],
    [{ principalId: 'bot-b', kind: 'bot', ownerPrincipalIds: ['alice', 'bob'] }, 'alice'],
    [{ principalId: 'bot-orphan', kind: 'bot', ownerPrincipalIds: [] }, 'bot-orphan'],
  ] as const)('%j draws from %s', (principal, key) => {
    expect(budgetKeyOf({ ...principal, ownerPrincipalIds: [...principal.ownerPrincipalIds] })).toBe(key);
  });
});

describe('clientAddressKey', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['10.1.2.3', '10.1.2.3'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['0:0:0:0:0:ffff:7f00:1', '127.0.0.1'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:85a3:1:8a2e:370:7334:1', '2001:db8:85a3:1::/64'],
    ['2001:db8:85a3:1:ffff:ffff:ffff:ffff', '2001:db8:85a3:1::/64'],
    ['2001:DB8:0085:a3::1', '2001:db8:85:a3::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    [undefined, 'unknown'],
    ['', 'unknown'],
    ['not:an:address:::', 'not:an:address:::'],
  ])('%s counts as %s', (address, key) => {
    expect(clientAddressKey(address)).toBe(key);
  });
});
