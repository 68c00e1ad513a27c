import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StateStore } from '../store/state-store.js';
import { SecretBox } from './secret-box.js';
import { looksLikeClaudeToken, TokenVault } from './token-vault.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('TokenVault', () => {
  it('opens only for the user and kind it was linked for, and not under another key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-'));
    dirs.push(dir);
    const store = StateStore.open(join(dir, 'state.db'));
    const vault = new TokenVault(store, SecretBox.fromKey('1'.repeat(64)));
    vault.link('u1', 'claude', '  sk-ant-oat01-secret  ');
    expect(vault.lookup('u1', 'claude')).toEqual({ status: 'linked', token: 'sk-ant-oat01-secret' });
    expect(vault.lookup('u1', 'github')).toEqual({ status: 'missing' });
    // A row copied onto another user does not open.
    store.putSealedToken('u2', 'claude', store.sealedToken('u1', 'claude')!);
    expect(vault.lookup('u2', 'claude')).toEqual({ status: 'unreadable', reason: 'tampered' });
    // The secretsKey changed and the old one is not given: those tokens must be linked again.
    const other = new TokenVault(store, SecretBox.fromKey('2'.repeat(64)));
    expect(other.lookup('u1', 'claude')).toEqual({ status: 'unreadable', reason: 'wrong_key' });
    expect(other.resealAll().unreadable).toEqual([
      { userId: 'u1', kind: 'claude', reason: 'wrong_key' },
      { userId: 'u2', kind: 'claude', reason: 'wrong_key' },
    ]);
    expect(vault.unlink('u1')).toBe(1);
    expect(vault.lookup('u1', 'claude')).toEqual({ status: 'missing' });
    store.close();
  });

  it('rotation: the previous key still opens, and resealAll moves every token it opens to the current key', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vault-'));
    dirs.push(dir);
    const store = StateStore.open(join(dir, 'state.db'));
    const [a, b, c] = ['a', 'b', 'c'].map((d) => SecretBox.fromKey(d.repeat(64))) as [SecretBox, SecretBox, SecretBox];
    const old = new TokenVault(store, a);
    old.link('u1', 'claude', 'sk-ant-oat01-one');
    old.link('u1', 'github', 'ghp_one');
    old.link('u2', 'claude', 'sk-ant-oat01-two');
    const rotated = new TokenVault(store, b, [c, a]);
    // Before re-sealing, lookups fall back to the previous keys.
    expect(rotated.lookup('u2', 'claude')).toEqual({ status: 'linked', token: 'sk-ant-oat01-two' });
    expect(rotated.resealAll()).toEqual({ resealed: 3, unreadable: [] });
    expect(rotated.resealAll()).toEqual({ resealed: 0, unreadable: [] });
    expect(store.tokensNotSealedWith(b.keyId)).toEqual([]);
    const onlyB = new TokenVault(store, b);
    expect(onlyB.lookup('u1', 'claude')).toEqual({ status: 'linked', token: 'sk-ant-oat01-one' });
    expect(onlyB.lookup('u1', 'github')).toEqual({ status: 'linked', token: 'ghp_one' });
    // The old key alone no longer opens anything.
    expect(old.lookup('u1', 'claude')).toEqual({ status: 'unreadable', reason: 'wrong_key' });
    store.close();
  });

  it('takes `claude setup-token` output by its prefix only', () => {
    expect(looksLikeClaudeToken(' sk-ant-oat01-abc')).toBe(true);
    expect(looksLikeClaudeToken('sk-ant-oat02-future-format')).toBe(true);
    expect(looksLikeClaudeToken('sk-ant-api03-key')).toBe(false);
    expect(looksLikeClaudeToken('hello')).toBe(false);
  });
});
