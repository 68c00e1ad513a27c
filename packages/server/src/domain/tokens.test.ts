import { describe, expect, it } from 'vitest';
import { hashesEqual, hashToken, looksLikeLocalToken, mintTokenSecret } from './tokens.js';

describe('tokens', () => {
  it('mints tokens with the kind prefix and 32 random bytes', () => {
    const bot = mintTokenSecret('bot');
    const human = mintTokenSecret('human');
    expect(bot).toMatch(/^bubble_agent_[A-Za-z0-9_-]{43}$/);
    expect(human).toMatch(/^bubble_user_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(bot.slice('bubble_agent_'.length), 'base64url')).toHaveLength(32);
    expect(mintTokenSecret('bot')).not.toBe(bot);
    expect(looksLikeLocalToken(bot)).toBe(true);
    expect(looksLikeLocalToken('bubble_agent_short')).toBe(false);
  });

  it('hashes with SHA-256 and compares digests', () => {
    const t = mintTokenSecret('human');
    expect(hashToken(t)).toHaveLength(32);
    expect(hashesEqual(hashToken(t), hashToken(t))).toBe(true);
    expect(hashesEqual(hashToken(t), hashToken(`${t}x`))).toBe(false);
    expect(hashesEqual(hashToken(t), Buffer.alloc(3))).toBe(false);
  });
});
