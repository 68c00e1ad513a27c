/**
 * A credential cache is only as good as the news of revocations. Two real servers on one
 * PostgreSQL database; B reaches it through a TCP proxy the test can cut. With B cut off, a token
 * revoked through A must stop working on B within about a second, even on a route that needs no
 * database (`whoami` answers from the cache): B answers 503 instead, since it can neither read
 * the outbox nor check the token. Once B reaches the database again, the token is 401 there.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import { createBubbleServer, type BubbleServer } from '../create-bubble-server.js';
import { CuttableProxy } from '../testing/cuttable-proxy.js';
import { client } from '../testing/test-client.js';
import { createHumanPrincipal } from './principal-service.js';

let db: TestDatabase;
let proxy: CuttableProxy;
let a: BubbleServer;
let b: BubbleServer;

beforeEach(async () => {
  db = await freshDatabase('auth-outbox');
  const front = await CuttableProxy.inFrontOf(db.url);
  proxy = front.proxy;
  a = await createBubbleServer({ database: db.url, port: 0 });
  // A short connection timeout, so B's requests answer 503 promptly while it is cut off.
  b = await createBubbleServer({ database: front.url, port: 0, postgres: { connectionTimeoutMs: 500 } });
});

afterEach(async () => {
  if (!proxy.isOpen) await proxy.open(proxy.port);
  await b?.close();
  await a?.close();
  await db.drop();
});

describe('the credential cache on an instance that cannot read the outbox', () => {
  it('stops accepting, within a second, a token revoked elsewhere; 503 while cut off, 401 once back', async () => {
    const { token } = await createHumanPrincipal(a.store, 'dave', null);
    const onB = client(b.url, token.token);
    expect((await onB.get('/v1/auth/whoami')).status).toBe(200);
    // Cached on B: another whoami needs no database.
    expect((await onB.get('/v1/auth/whoami')).status).toBe(200);

    await proxy.cut();
    expect((await client(a.url, token.token).delete(`/v1/auth/tokens/${token.tokenId}`)).status).toBe(204);
    const revokedAt = performance.now();
    let status = 200;
    while (status === 200 && performance.now() - revokedAt < 5_000) {
      status = (await onB.get('/v1/auth/whoami')).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    const refusedAfter = performance.now() - revokedAt;
    expect(status).toBe(503);
    expect(refusedAfter).toBeLessThan(1_500);
    // And it stays refused while B is cut off.
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await onB.get('/v1/auth/whoami')).status).toBe(503);

    await proxy.open(proxy.port);
    for (const deadline = Date.now() + 10_000; ; ) {
      status = (await onB.get('/v1/auth/whoami')).status;
      if (status !== 503 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
  });

  it('keeps answering from the cache while the outbox is read (no lookup per request)', async () => {
    const { token } = await createHumanPrincipal(a.store, 'erin', null);
    const onB = client(b.url, token.token);
    expect((await onB.get('/v1/auth/whoami')).status).toBe(200);
    // Only the cache can answer once every new connection through the proxy is refused and the
    // pool's open ones are dropped; the outbox was read under a second ago, so it still may.
    await proxy.cut();
    expect((await onB.get('/v1/auth/whoami')).status).toBe(200);
  });
});
