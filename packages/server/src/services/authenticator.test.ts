import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLiveBus, type LiveBus } from '../live/live-bus.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { BubbleStore } from '../store/store.js';
import { createAuthenticator } from './authenticator.js';
import { createHumanPrincipal } from './principal-service.js';

let dir: string;
let store: BubbleStore;
let bus: LiveBus;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-auth-'));
  bus = createLiveBus();
  store = await openSqliteStore(join(dir, 'bubble.db'), {
    onCommit: (ms) => {
      for (const m of ms) bus.publish(m);
    },
  });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('createAuthenticator', () => {
  it('answers known tokens, null for unknown or malformed ones', async () => {
    const auth = createAuthenticator(store, bus);
    const { token } = await createHumanPrincipal(store, 'alice', null);
    expect(await auth.authenticate(token.token)).toMatchObject({
      principal: { principalId: 'alice' },
      tokenId: token.tokenId,
    });
    expect(await auth.authenticate(`bubble_user_${'x'.repeat(43)}`)).toBeNull();
    expect(await auth.authenticate('nonsense')).toMatchObject({
      refused: true,
      countsAsFailure: true,
      message: expect.stringContaining('neither a Bubble token'),
    });
    expect(await auth.authenticate('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toMatchObject({
      refused: true,
      countsAsFailure: true,
      message: expect.stringContaining('no identity provider'),
    });
  });

  it('answers a renamed principal under its new name from the cache', async () => {
    const auth = createAuthenticator(store, bus);
    const { token } = await createHumanPrincipal(store, 'alice', 'Alice');
    expect(await auth.authenticate(token.token)).toMatchObject({ principal: { displayName: 'Alice' } });
    await store.updatePrincipal('alice', { displayName: 'Alice L.' });
    expect(auth.known(token.token)?.principal.displayName).toBe('Alice L.');
  });

  it('stops answering a cached token as soon as its revocation commits', async () => {
    const auth = createAuthenticator(store, bus);
    const { token } = await createHumanPrincipal(store, 'alice', null);
    expect(await auth.authenticate(token.token)).not.toBeNull();
    await store.revokeTokens('alice', token.tokenId);
    expect(await auth.authenticate(token.token)).toBeNull();
  });

  it('looks every credential up again while its cache is not trusted, and answers from the cache once it is', async () => {
    let trusted = true;
    const auth = createAuthenticator(store, bus, undefined, Date.now, { cacheTrusted: () => trusted });
    const { token } = await createHumanPrincipal(store, 'alice', null);
    const lookups = vi.spyOn(store, 'findLiveTokenByHash');
    expect(await auth.authenticate(token.token)).not.toBeNull();
    expect(await auth.authenticate(token.token)).not.toBeNull();
    expect(auth.known(token.token)).toBeDefined();
    expect(lookups).toHaveBeenCalledTimes(1);
    trusted = false;
    expect(auth.known(token.token)).toBeUndefined();
    expect(await auth.authenticate(token.token)).not.toBeNull();
    expect(await auth.authenticate(token.token)).not.toBeNull();
    expect(lookups).toHaveBeenCalledTimes(3);
    trusted = true;
    expect(await auth.authenticate(token.token)).not.toBeNull();
    expect(lookups).toHaveBeenCalledTimes(3);
  });

  it('does not keep answering a token looked up concurrently with its revocation', async () => {
    const auth = createAuthenticator(store, bus);
    const { token } = await createHumanPrincipal(store, 'alice', null);
    const lookup = auth.authenticate(token.token);
    const revoked = store.revokeTokens('alice');
    await Promise.all([lookup, revoked]);
    expect(await auth.authenticate(token.token)).toBeNull();
  });
});
