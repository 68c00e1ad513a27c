import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
  store = await openSqliteStore(join(dir, 'bubble.db'), { onCommit: (ms) => ms.forEach((m) => bus.publish(m)) });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('createAuthenticator', () => {
  it('answers known tokens, null for unknown or malformed ones', async () => {
    const auth = createAuthenticator(store, bus);
    const { token } = await createHumanPrincipal(store, 'alice', null);
    expect((await auth.authenticate(token.token))?.principal.principalId).toBe('alice');
    expect((await auth.authenticate(token.token))?.tokenId).toBe(token.tokenId);
    expect(await auth.authenticate(`bubble_user_${'x'.repeat(43)}`)).toBeNull();
    expect(await auth.authenticate('nonsense')).toBeNull();
  });

  it('stops answering a cached token as soon as its revocation commits', async () => {
    const auth = createAuthenticator(store, bus);
    const { token } = await createHumanPrincipal(store, 'alice', null);
    expect(await auth.authenticate(token.token)).not.toBeNull();
    await store.revokeTokens('alice', token.tokenId);
    expect(await auth.authenticate(token.token)).toBeNull();
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
