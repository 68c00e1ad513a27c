import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createSecretKey,
  randomBytes,
  scryptSync,
  type KeyObject,
} from 'node:crypto';
import { inspect } from 'node:util';

/**
 * Users' tokens sealed at rest: AES-256-GCM under the configured `secretsKey`,
 * each ciphertext bound to its context (`claude:<userId>`) so a row copied to
 * another user or kind does not open. Nothing here ever puts a key or a
 * plaintext into a message, a log line or an inspected object.
 */

export type SecretBoxErrorCode = 'wrong_key' | 'tampered' | 'malformed' | 'empty_key';

export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
  readonly code: SecretBoxErrorCode;

  constructor(code: SecretBoxErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Fixed, so the same passphrase gives the same key on every start; a passphrase is the weaker choice anyway. */
const SCRYPT_SALT = 'bubble-discord secretsKey v1';
/** scrypt with N=2^15, r=8 needs 128·N·r = 32 MiB, exactly Node's default maxmem, which it must exceed. */
const SCRYPT_OPTIONS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
/** Domain separation: the key id is an HMAC under the key, never a hash of the key itself. */
const KEY_ID_LABEL = 'bubble-discord secretsKey id v1';
const AAD_LABEL = 'bubble-discord secret v1\0';

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;
const KEY_ID = /^[0-9a-f]{8}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** 64 hex digits or the base64 (or base64url) of exactly 32 bytes; undefined for anything else. */
function rawKey(key: string): Buffer | undefined {
  if (HEX_KEY.test(key)) return Buffer.from(key, 'hex');
  if (!BASE64_KEY.test(key)) return undefined;
  const bytes = Buffer.from(key, 'base64');
  // Only a canonical encoding counts: a 43rd character with stray low bits is not the base64 of these bytes.
  const canonical = bytes.toString('base64url');
  return bytes.length === 32 && canonical === key.replace(/=$/, '').replaceAll('+', '-').replaceAll('/', '_')
    ? bytes
    : undefined;
}

export class SecretBox {
  readonly #key: KeyObject;
  /** How the key was taken: 'raw' or 'passphrase' (the bot warns on passphrase: prefer `openssl rand -hex 32`). */
  readonly keyKind: 'raw' | 'passphrase';
  /** A short non-secret fingerprint of the key, stored beside ciphertexts so a changed key is detected. */
  readonly keyId: string;

  private constructor(key: Buffer, keyKind: 'raw' | 'passphrase') {
    this.#key = createSecretKey(key);
    key.fill(0);
    this.keyKind = keyKind;
    const mac = createHmac('sha256', this.#key).update(KEY_ID_LABEL).digest();
    this.keyId = createHash('sha256').update(mac).digest('hex').slice(0, 8);
    Object.freeze(this);
  }

  /**
   * key: the configured secretsKey. 64 hex chars or base64 of 32 bytes are the raw key; any other non-empty
   * string is a passphrase, stretched with scrypt. Surrounding whitespace is ignored (a key file's trailing
   * newline must not turn a hex key into a passphrase).
   */
  static fromKey(key: string): SecretBox {
    const text = typeof key === 'string' ? key.trim() : '';
    if (text === '') throw new SecretBoxError('empty_key', 'secretsKey is empty');
    const raw = rawKey(text);
    if (raw) return new SecretBox(raw, 'raw');
    return new SecretBox(scryptSync(text, SCRYPT_SALT, 32, SCRYPT_OPTIONS), 'passphrase');
  }

  /** Encrypts with a fresh 12-byte IV, `context` bound as AAD. Output: "v1:<keyId>:<base64url(iv|tag|ciphertext)>". */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const payload = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
    return `${VERSION}:${this.keyId}:${payload}`;
  }

  /** Decrypts; throws a SecretBoxError: 'wrong_key' (sealed under another key), 'tampered' (fails to authenticate, wrong context included), 'malformed'. */
  open(sealed: string, context: string): string {
    if (typeof sealed !== 'string') throw new SecretBoxError('malformed', 'the sealed secret is not a string');
    const parts = sealed.split(':');
    const [version, keyId, payload] = parts;
    if (parts.length !== 3 || version !== VERSION || keyId === undefined || payload === undefined) {
      throw new SecretBoxError('malformed', `the sealed secret is not in the ${VERSION}:<key id>:<data> format`);
    }
    if (!KEY_ID.test(keyId)) throw new SecretBoxError('malformed', 'the sealed secret has no valid key id');
    const bytes = BASE64URL.test(payload) ? Buffer.from(payload, 'base64url') : undefined;
    // Canonical base64url only, so every change to the text is either malformed or fails to authenticate.
    if (bytes === undefined || bytes.toString('base64url') !== payload || bytes.length < IV_BYTES + TAG_BYTES) {
      throw new SecretBoxError(
        'malformed',
        'the sealed secret data is not valid base64url of an IV, a tag and a ciphertext',
      );
    }
    if (keyId !== this.keyId) {
      throw new SecretBoxError(
        'wrong_key',
        `the secret was sealed with another secretsKey (key id ${keyId}; this key's id is ${this.keyId})`,
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    decipher.setAAD(aad(context));
    try {
      const plaintext = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
      return plaintext.toString('utf8');
    } catch {
      // GCM says only "unable to authenticate": the data was changed, or it belongs to another context.
      throw new SecretBoxError(
        'tampered',
        'the sealed secret does not authenticate (changed, or sealed for another user or kind)',
      );
    }
  }

  toString(): string {
    return `SecretBox(${this.keyKind}, key id ${this.keyId})`;
  }

  toJSON(): { keyKind: string; keyId: string } {
    return { keyKind: this.keyKind, keyId: this.keyId };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** The context, labelled, as GCM's additional data: authenticated, not encrypted. */
function aad(context: string): Buffer {
  return Buffer.from(`${AAD_LABEL}${context}`, 'utf8');
}
