import { createHash, createHmac, scryptSync } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SecretBox, SecretBoxError } from './secret-box.js';

const HEX = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
const OTHER_HEX = 'ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100';
const TOKEN = 'sk-ant-oat01-EXAMPLE-not-a-real-token-0123456789';
const CONTEXT = 'claude:123456789012345678';

const box = SecretBox.fromKey(HEX);

/** The SecretBoxError `fn` throws, checked to carry neither the token nor the key. */
function failure(fn: () => unknown): SecretBoxError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SecretBoxError);
    const text = `${String(error)} ${inspect(error)}`;
    expect(text).not.toContain(TOKEN);
    expect(text.toLowerCase()).not.toContain(HEX);
    return error as SecretBoxError;
  }
  throw new Error('expected a SecretBoxError');
}

/** Replaces the payload of a sealed string by `edit` of its bytes. */
function editPayload(sealed: string, edit: (bytes: Buffer) => Buffer): string {
  const [version, keyId, payload] = sealed.split(':');
  return `${version}:${keyId}:${edit(Buffer.from(payload!, 'base64url')).toString('base64url')}`;
}

describe('SecretBox', () => {
  it('round-trips, in the v1:<keyId>:<base64url> format, without the plaintext in sight', () => {
    const sealed = box.seal(TOKEN, CONTEXT);
    expect(sealed).toMatch(/^v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(sealed.split(':')[1]).toBe(box.keyId);
    expect(sealed).not.toContain(TOKEN);
    expect(sealed).not.toContain(Buffer.from(TOKEN).toString('base64url').slice(0, 12));
    expect(box.open(sealed, CONTEXT)).toBe(TOKEN);
    // 12-byte IV + 16-byte tag + the UTF-8 plaintext
    expect(Buffer.from(sealed.split(':')[2]!, 'base64url')).toHaveLength(12 + 16 + TOKEN.length);
  });

  it.each(['', 'ü ✓ 😀 non-ASCII', 'x'.repeat(10_000)])('round-trips %#', (plaintext) => {
    expect(box.open(box.seal(plaintext, CONTEXT), CONTEXT)).toBe(plaintext);
  });

  it('uses a fresh IV: two seals of the same plaintext differ, and both open', () => {
    const a = box.seal(TOKEN, CONTEXT);
    const b = box.seal(TOKEN, CONTEXT);
    expect(a).not.toBe(b);
    expect(a.split(':')[2]!.slice(0, 16)).not.toBe(b.split(':')[2]!.slice(0, 16));
    expect([box.open(a, CONTEXT), box.open(b, CONTEXT)]).toEqual([TOKEN, TOKEN]);
  });

  it('binds the context: another user or kind is tampered', () => {
    const sealed = box.seal(TOKEN, CONTEXT);
    for (const context of ['claude:999', 'github:123456789012345678', '', `${CONTEXT} `]) {
      expect(failure(() => box.open(sealed, context)).code).toBe('tampered');
    }
  });

  it('detects a flipped bit anywhere in the IV, the tag or the ciphertext', () => {
    const sealed = box.seal(TOKEN, CONTEXT);
    const length = Buffer.from(sealed.split(':')[2]!, 'base64url').length;
    for (const at of [0, 11, 12, 27, 28, length - 1]) {
      const flipped = editPayload(sealed, (bytes) => {
        bytes[at]! ^= 0x01;
        return bytes;
      });
      expect(failure(() => box.open(flipped, CONTEXT)).code).toBe('tampered');
    }
    const truncated = editPayload(sealed, (bytes) => bytes.subarray(0, bytes.length - 1));
    expect(failure(() => box.open(truncated, CONTEXT)).code).toBe('tampered');
  });

  it('tells a ciphertext from another key: wrong_key', () => {
    const other = SecretBox.fromKey(OTHER_HEX);
    expect(other.keyId).not.toBe(box.keyId);
    const error = failure(() => other.open(box.seal(TOKEN, CONTEXT), CONTEXT));
    expect(error.code).toBe('wrong_key');
    expect(error.message).toContain(box.keyId);
  });

  it('reads a changed key id as wrong_key (the id is what tells keys apart)', () => {
    const sealed = box.seal(TOKEN, CONTEXT);
    expect(failure(() => box.open(sealed.replace(box.keyId, '00000000'), CONTEXT)).code).toBe('wrong_key');
  });

  it.each([
    ['empty', ''],
    ['no separators', 'garbage'],
    ['unknown version', `v2:${box.keyId}:AAAA`],
    ['two parts', `v1:${box.keyId}`],
    ['four parts', `v1:${box.keyId}:AAAA:AAAA`],
    ['bad key id', 'v1:XYZ:AAAA'],
    ['upper-case key id', `v1:ABCDEF12:${'A'.repeat(40)}`],
    ['not base64url', `v1:${box.keyId}:${'A'.repeat(39)}+`],
    ['padded', `v1:${box.keyId}:${'A'.repeat(38)}==`],
    ['too short for IV and tag', `v1:${box.keyId}:${Buffer.alloc(27).toString('base64url')}`],
    ['empty payload', `v1:${box.keyId}:`],
  ])('rejects %s as malformed', (_name, sealed) => {
    expect(failure(() => box.open(sealed, CONTEXT)).code).toBe('malformed');
  });

  it('rejects a non-string as malformed', () => {
    expect(failure(() => box.open(42 as unknown as string, CONTEXT)).code).toBe('malformed');
  });

  it('checks the format before the key: a malformed row under another key id is malformed', () => {
    expect(failure(() => box.open('v1:00000000:%%%', CONTEXT)).code).toBe('malformed');
  });
});

describe('SecretBox.fromKey', () => {
  const keyId = (key: Buffer): string =>
    createHash('sha256')
      .update(createHmac('sha256', key).update('bubble-discord secretsKey id v1').digest())
      .digest('hex')
      .slice(0, 8);

  it('takes 64 hex digits as the raw key (either case, surrounding whitespace ignored)', () => {
    expect(box.keyKind).toBe('raw');
    expect(box.keyId).toBe(keyId(Buffer.from(HEX, 'hex')));
    for (const key of [HEX.toUpperCase(), `  ${HEX}\n`]) {
      const same = SecretBox.fromKey(key);
      expect([same.keyKind, same.keyId]).toEqual(['raw', box.keyId]);
      expect(same.open(box.seal(TOKEN, CONTEXT), CONTEXT)).toBe(TOKEN);
    }
  });

  it('takes base64 (or base64url) of 32 bytes as the raw key', () => {
    const bytes = Buffer.from(HEX, 'hex');
    bytes[0] = 0xfb; // so the encodings hold "+" / "-"
    for (const key of [
      bytes.toString('base64'),
      bytes.toString('base64').replace(/=$/, ''),
      bytes.toString('base64url'),
    ]) {
      const fromBase64 = SecretBox.fromKey(key);
      expect([fromBase64.keyKind, fromBase64.keyId]).toEqual(['raw', keyId(bytes)]);
    }
    expect(SecretBox.fromKey(Buffer.from(HEX, 'hex').toString('base64')).keyId).toBe(box.keyId);
  });

  it('takes anything else as a passphrase, stretched with scrypt', () => {
    const passphrase = 'correct horse battery staple';
    const box1 = SecretBox.fromKey(passphrase);
    expect(box1.keyKind).toBe('passphrase');
    const expected = scryptSync(passphrase, 'bubble-discord secretsKey v1', 32, {
      N: 2 ** 15,
      r: 8,
      p: 1,
      maxmem: 64 * 1024 * 1024,
    });
    expect(box1.keyId).toBe(keyId(expected));
    // Not raw: 63 hex digits, base64 of 31 bytes, non-canonical base64.
    for (const almost of [
      HEX.slice(1),
      Buffer.alloc(31, 1).toString('base64'),
      `${Buffer.alloc(32, 1).toString('base64').slice(0, 42)}B=`,
    ]) {
      expect(SecretBox.fromKey(almost).keyKind).toBe('passphrase');
    }
    // The same passphrase gives the same key on the next start.
    expect(SecretBox.fromKey(passphrase).open(box1.seal(TOKEN, CONTEXT), CONTEXT)).toBe(TOKEN);
  });

  it.each(['', '   ', '\n\t'])('refuses an empty key %j', (key) => {
    expect(failure(() => SecretBox.fromKey(key)).code).toBe('empty_key');
  });

  it('never shows the key: inspect, JSON, String and own properties', () => {
    const passphraseBox = SecretBox.fromKey('my secret passphrase');
    for (const [candidate, secret] of [
      [box, HEX],
      [passphraseBox, 'my secret passphrase'],
    ] as const) {
      const shown = [
        inspect(candidate),
        inspect(candidate, { showHidden: true, depth: Infinity, customInspect: false }),
        JSON.stringify(candidate),
        JSON.stringify({ nested: candidate }),
        String(candidate),
        `${candidate}`,
        Object.getOwnPropertyNames(candidate).join(','),
      ].join('\n');
      expect(shown.toLowerCase()).not.toContain(secret);
      expect(shown).not.toContain(Buffer.from(HEX, 'hex').toString('base64'));
      expect(shown).toContain(candidate.keyId);
    }
    expect(JSON.parse(JSON.stringify(box))).toEqual({ keyKind: 'raw', keyId: box.keyId });
    expect(Object.isFrozen(box)).toBe(true);
  });
});
