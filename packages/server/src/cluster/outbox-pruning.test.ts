/**
 * The outbox is pruned, so an instance cut off from the database for longer than the window
 * finds the entries it missed gone. Two real servers on one PostgreSQL database, with a window
 * of one second; B reaches the database through a TCP proxy the test can cut. While B is cut off,
 * a token is revoked and a grant ended through A, and A prunes their entries. Once B is back it
 * must act on them all the same: the revoked token's socket is closed with 4003 and the token is
 * 401 (never answered from B's cache), and the subscription whose grant ended is ended.
 */
import { CLOSE_CODES, SUBSCRIPTION_END_REASONS } from '@bubble/protocol';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { subscribe, until } from '../../test/support/cluster-world.js';
import { freshDatabase, type TestDatabase } from '../../test/support/test-postgres.js';
import { createBubbleServer, type BubbleServer } from '../create-bubble-server.js';
import { createHumanPrincipal } from '../services/principal-service.js';
import { CuttableProxy } from '../testing/cuttable-proxy.js';
import { client } from '../testing/test-client.js';
import { TestSocket } from '../ws/ws-test-client.js';

const RETENTION_MS = 1_000;

let db: TestDatabase;
let proxy: CuttableProxy;
let a: BubbleServer;
let b: BubbleServer;
let admin: pg.Client;

beforeEach(async () => {
  db = await freshDatabase('outbox-pruning');
  const front = await CuttableProxy.inFrontOf(db.url);
  proxy = front.proxy;
  const cluster = { outboxRetentionMs: RETENTION_MS };
  a = await createBubbleServer({ database: db.url, port: 0, cluster });
  // A short connection timeout, so B's requests answer 503 promptly while it is cut off.
  b = await createBubbleServer({
    database: front.url,
    port: 0,
    cluster,
    postgres: { connectionTimeoutMs: 500 },
  });
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterEach(async () => {
  if (!proxy.isOpen) await proxy.open(proxy.port);
  await admin?.end();
  await b?.close();
  await a?.close();
  await db.drop();
});

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const outboxKinds = async (): Promise<string[]> =>
  (await admin.query<{ kind: string }>("SELECT message->>'kind' AS kind FROM outbox ORDER BY id")).rows.map(
    (r) => r.kind,
  );

describe('an instance cut off for longer than the outbox keeps its entries', () => {
  it('acts on a revocation and an ended grant whose entries were pruned before it could read them', async () => {
    const alice = await createHumanPrincipal(a.store, 'alice', null);
    const dave = await createHumanPrincipal(a.store, 'dave', null);
    const erin = await createHumanPrincipal(a.store, 'erin', null);
    const aliceOnA = client(a.url, alice.token.token);
    const created = await aliceOnA.post('/v1/threads', {});
    const threadId = created.body.thread.threadId as string;
    // Alice cannot see erin yet: erin accepts the invitation.
    expect(
      (await aliceOnA.post(`/v1/threads/${threadId}/participants`, { principalId: 'erin', role: 'member' })).status,
    ).toBe(202);
    expect((await client(a.url, erin.token.token).post(`/v1/invitations/${threadId}/accept`)).status).toBe(200);

    // On B: dave's token is cached and holds a socket; erin follows the thread.
    const daveOnB = client(b.url, dave.token.token);
    expect((await daveOnB.get('/v1/auth/whoami')).status).toBe(200);
    const daveSocket = (await TestSocket.authenticated(b.wsUrl, dave.token.token)).socket;
    const erinSocket = (await TestSocket.authenticated(b.wsUrl, erin.token.token)).socket;
    expect((await subscribe(erinSocket, 's1', threadId)).type).toBe('subscribed');

    await proxy.cut();
    expect((await client(a.url, dave.token.token).delete(`/v1/auth/tokens/${dave.token.tokenId}`)).status).toBe(204);
    expect((await aliceOnA.delete(`/v1/threads/${threadId}/participants/erin`)).status).toBe(204);
    // A later entry, so the pruner (which always keeps the newest) may take those two.
    expect((await aliceOnA.post('/v1/threads', {})).status).toBe(201);
    await until(
      async () => {
        const kinds = await outboxKinds();
        return kinds.length === 1 && kinds[0] === 'grant' ? kinds : undefined;
      },
      'the pruning of the revocation and the grant change',
      10_000,
      100,
    );

    await proxy.open(proxy.port);
    expect(await within(daveSocket.closed, 10_000, "dave's socket to close")).toEqual({
      code: CLOSE_CODES.credentialRevoked,
      reason: 'credential revoked',
    });
    const ended = await erinSocket.next((frame) => frame.type === 'subscription_ended' && frame.id === 's1', 10_000);
    expect(ended.reason).toBe(SUBSCRIPTION_END_REASONS.grantRevoked);
    // B answers for dave's token from the database once it can, never from its cache again.
    const first = await until(
      async () => {
        const status = (await daveOnB.get('/v1/auth/whoami')).status;
        return status === 503 ? undefined : status;
      },
      'B to answer',
      10_000,
      50,
    );
    expect(first).toBe(401);
    for (const deadline = Date.now() + 1_500; Date.now() < deadline; ) {
      expect((await daveOnB.get('/v1/auth/whoami')).status).toBe(401);
      await new Promise((r) => setTimeout(r, 50));
    }
    erinSocket.ws.close();
  });
});
