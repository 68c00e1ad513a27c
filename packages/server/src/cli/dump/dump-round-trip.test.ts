import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import { DATABASE_FILE_NAME } from '../../create-bubble-server.js';
import { hashToken } from '../../domain/tokens.js';
import { openPostgresStore } from '../../store/postgres/postgres-store.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { BubbleStore } from '../../store/store.js';
import { runCli, serveCli, type ServeProcess } from '../../testing/cli-process.js';
import { httpCall } from '../../testing/test-client.js';

let dir: string;
let pgDb: TestDatabase;
const running: ServeProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-dump-'));
  pgDb = await freshDatabase('dump');
});
afterEach(async () => {
  for (const server of running.splice(0)) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
  await pgDb.drop();
  await rm(dir, { recursive: true, force: true });
});

const cli = async (...args: string[]) => JSON.parse((await runCli(args)).stdout);
const fixedClock = () => new Date('2026-12-02T09:00:00.000Z');

/**
 * A database that uses every table: people, tokens (one revoked), an OIDC subject, threads, grants,
 * invites, pending invitations, runs, cursors, artifacts.
 */
async function fill(store: BubbleStore): Promise<void> {
  await store.createPrincipal({ principalId: 'alice', kind: 'human', displayName: 'Alice', ownerPrincipalIds: [] });
  await store.createPrincipal({ principalId: 'bob', kind: 'human', displayName: null, ownerPrincipalIds: [] });
  await store.createPrincipal({
    principalId: 'bot-a',
    kind: 'bot',
    displayName: 'Bot A',
    ownerPrincipalIds: ['alice', 'bob'],
    joinableBy: 'anyone',
  });
  await store.addToken({ tokenId: 'tok_old', principalId: 'bob', hash: hashToken('old') });
  await store.revokeTokens('bob', 'tok_old');
  await store.resolveOidcSubject({ issuer: 'https://idp', subject: 'z', idCandidates: ['zoe'], nameClaim: 'Zoe' });
  await store.revokeAllCredentials('zoe');
  const top = (
    await store.createThread({ threadId: 'th_top', parentThreadId: null, title: 'Top', createdBy: 'alice', key: null })
  ).thread;
  const sub = (
    await store.createThread({
      threadId: 'th_top.sub',
      parentThreadId: top.threadId,
      title: null,
      createdBy: 'alice',
      key: 'k1',
    })
  ).thread;
  const other = (
    await store.createThread({ threadId: 'th_other', parentThreadId: null, title: 'ü', createdBy: 'bob', key: null })
  ).thread;
  await store.putGrant({
    threadId: top.threadId,
    principalId: 'bot-a',
    role: 'member',
    by: 'alice',
    mayChangeRole: false,
  });
  await store.putGrant({
    threadId: other.threadId,
    principalId: 'bot-a',
    role: 'member',
    by: 'bob',
    mayChangeRole: false,
  });
  await store.putGrant({
    threadId: top.threadId,
    principalId: 'bob',
    role: 'member',
    by: 'alice',
    mayChangeRole: false,
  });
  await store.putGrant({ threadId: top.threadId, principalId: 'bob', role: 'owner', by: 'alice', mayChangeRole: true });
  await store.revokeGrant({ threadId: top.threadId, principalId: 'bob', by: 'alice' });
  await store.createInvite({
    inviteId: 'inv_1',
    threadId: top.threadId,
    role: 'member',
    createdBy: 'alice',
    hash: hashToken('invite-1'),
    expiresAt: '2999-01-01T00:00:00.000Z',
    maxUses: 2,
  });
  await store.acceptInvite({ hash: hashToken('invite-1'), principalId: 'zoe' });
  // Pending invitations: zoe's two keep their order (other before sub), bob's is for owner.
  const invite = (threadId: string, principalId: string, invitedBy: string, role: 'owner' | 'member' = 'member') =>
    store.inviteToThread({ threadId, principalId, role, invitedBy, maxPending: 100 });
  await invite(other.threadId, 'zoe', 'bob');
  await invite(sub.threadId, 'bob', 'alice', 'owner');
  await invite(sub.threadId, 'zoe', 'alice');
  await store.appendEvents({
    threadId: top.threadId,
    principalId: 'bot-a',
    events: [
      { type: 'run_started', data: { runId: 'r1' } },
      { type: 'message_part', data: { runId: 'r1', chunk: { type: 'text-delta', id: 't', delta: 'héllo "quoted"' } } },
      { type: 'acme.note', data: { z: 1, a: [1, 2, { b: null }] }, clientEventId: 'c-1' },
      { type: 'run_finished', data: { runId: 'r1', status: 'completed' } },
    ],
  });
  await store.appendEvents({
    threadId: sub.threadId,
    principalId: 'alice',
    events: Array.from({ length: 1_203 }, (_, i) => ({ type: 'acme.note', data: { i } })),
  });
  await store.putCursor(top.threadId, 'alice', 5);
  await store.putCursor(sub.threadId, 'alice', 1_000);
  await store.putArtifact({
    threadId: top.threadId,
    name: 'plan.md',
    content: 'v1',
    mediaType: 'text/markdown',
    by: 'alice',
  });
  await store.putArtifact({
    threadId: top.threadId,
    name: 'plan.md',
    content: 'v2 ✓',
    mediaType: 'text/markdown',
    baseVersion: 1,
    by: 'alice',
  });
}

/** Everything the store answers about the filled database, to compare one store with another. */
async function answers(store: BubbleStore) {
  const principals = await store.listPrincipals();
  const threadIds = ['th_top', 'th_top.sub', 'th_other'];
  return {
    principals,
    tokens: await Promise.all(principals.map((p) => store.listTokens(p.principalId))),
    grants: await Promise.all(principals.map((p) => store.listLiveGrantsOfPrincipal(p.principalId))),
    threadsOf: await Promise.all(principals.map((p) => store.listThreadsWithLiveGrant(p.principalId))),
    revocations: await store.readTokenRevocationsAfter(0, 100),
    oidc: await store.findOidcSubject('https://idp', 'z'),
    invitations: await Promise.all(principals.map((p) => store.listPendingInvitations(p.principalId))),
    threads: await Promise.all(
      threadIds.map(async (id) => ({
        thread: await store.getThread(id),
        events: await store.readEventsAfter(id, 0, 5_000),
        grants: await store.listLiveGrantsOnThread(id),
        invites: await store.listOpenInvites(id),
        artifacts: await store.listArtifacts(id),
        firstPlan: await store.getArtifact(id, 'plan.md', 1),
        cursor: await store.getCursor(id, 'alice'),
      })),
    ),
  };
}

/** A dump's rows (its header says where it came from and when, which differ by design). */
async function dumpRows(file: string): Promise<string[]> {
  const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
  expect(JSON.parse(lines[0]!)).toMatchObject({ bubbleDump: 1 });
  return lines.slice(1);
}

describe('bubble-server export and import', () => {
  it('moves a server from SQLite to PostgreSQL and back with every id, seq and token hash; a token minted before works after', async () => {
    const sqliteA = join(dir, 'a');
    const sqliteC = join(dir, 'c');
    await mkdir(sqliteA, { recursive: true });
    const source = await openSqliteStore(join(sqliteA, DATABASE_FILE_NAME), { now: fixedClock });
    await fill(source);
    const before = await answers(source);
    expect(before.invitations.flat().map((i) => `${i.threadId} ${i.invitedBy} ${i.role}`)).toEqual([
      'th_top.sub alice owner',
      'th_other bob member',
      'th_top.sub alice member',
    ]);
    await source.close();
    const minted = await cli('principal', 'mint-token', 'alice', '--data', sqliteA);

    const dumpA = join(dir, 'a.jsonl');
    const exported = await cli('export', '--data', sqliteA, '--file', dumpA);
    expect(exported.exported).toMatchObject({
      principals: 4,
      tokens: 2,
      events: 1_218,
      token_revocations: 2,
      invitations: 3,
    });
    expect(await cli('import', '--database', pgDb.url, '--file', dumpA)).toEqual({ imported: exported.exported });

    const dumpB = join(dir, 'b.jsonl');
    expect(await cli('export', '--database', pgDb.url, '--file', dumpB)).toEqual(exported);
    expect(await cli('import', '--data', sqliteC, '--file', dumpB)).toEqual({ imported: exported.exported });
    const dumpC = join(dir, 'c.jsonl');
    await cli('export', '--data', sqliteC, '--file', dumpC);
    // Row for row, byte for byte, the same three times over.
    const rowsA = await dumpRows(dumpA);
    expect(await dumpRows(dumpB)).toEqual(rowsA);
    expect(await dumpRows(dumpC)).toEqual(rowsA);

    // Each store answers exactly what the source did (the minted token aside, which came after).
    const pgStore = await openPostgresStore(pgDb.url, { now: fixedClock });
    const cStore = await openSqliteStore(join(sqliteC, DATABASE_FILE_NAME), { now: fixedClock });
    const withoutMinted = (a: Awaited<ReturnType<typeof answers>>) => ({
      ...a,
      tokens: a.tokens.map((list) => list.filter((t) => t.tokenId !== minted.token.tokenId)),
    });
    expect(JSON.stringify(withoutMinted(await answers(pgStore)))).toBe(JSON.stringify(before));
    expect(JSON.stringify(withoutMinted(await answers(cStore)))).toBe(JSON.stringify(before));
    // The imported database goes on where the source stopped: seqs, revocation log, grant ids.
    expect(
      (
        await pgStore.appendEvents({
          threadId: 'th_top',
          principalId: 'alice',
          events: [{ type: 'acme.note', data: {} }],
        })
      ).events[0]!.seq,
    ).toBe(before.threads[0]!.thread!.headSeq + 1);
    await pgStore.revokeTokens('alice', minted.token.tokenId);
    expect(
      (await pgStore.readTokenRevocationsAfter(before.revocations.at(-1)!.cursor, 10)).map((r) => r.tokenId),
    ).toEqual([minted.token.tokenId]);
    expect(
      (
        await pgStore.putGrant({
          threadId: 'th_other',
          principalId: 'alice',
          role: 'member',
          by: 'bob',
          mayChangeRole: false,
        })
      ).change,
    ).toBe('created');
    await pgStore.close();
    await cStore.close();

    // The token minted on SQLite before the export authenticates against a server on the imported database.
    const server = serveCli(['--port', '0', '--data', sqliteC, '--log-level', 'silent']);
    running.push(server);
    const whoami = await httpCall(await server.listening, 'GET', '/v1/auth/whoami', { token: minted.token.token });
    expect(whoami.body.principal.principalId).toBe('alice');
  });

  it('serves a database imported into PostgreSQL, and refuses to import into one that is not empty', async () => {
    const sqliteA = join(dir, 'a');
    const created = await cli('principal', 'create-human', 'alice', '--data', sqliteA);
    const dump = join(dir, 'a.jsonl');
    await cli('export', '--data', sqliteA, '--file', dump);
    await cli('import', '--database', pgDb.url, '--file', dump);
    const server = serveCli(['--port', '0', '--database', pgDb.url, '--log-level', 'silent']);
    running.push(server);
    const url = await server.listening;
    expect(
      (await httpCall(url, 'GET', '/v1/auth/whoami', { token: created.token.token })).body.principal.principalId,
    ).toBe('alice');
    const again = await runCli(['import', '--database', pgDb.url, '--file', dump]).catch((e) => e);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('the target postgres database is not empty');
    const intoSqlite = await runCli(['import', '--data', sqliteA, '--file', dump]).catch((e) => e);
    expect(intoSqlite.code).toBe(1);
    expect(intoSqlite.stderr).toContain('the target sqlite database is not empty');
  });

  it('lands nothing of a dump that is cut off or does not match its counts', async () => {
    const sqliteA = join(dir, 'a');
    await cli('principal', 'create-human', 'alice', '--data', sqliteA);
    await cli('principal', 'create-human', 'bob', '--data', sqliteA);
    const dump = join(dir, 'a.jsonl');
    await cli('export', '--data', sqliteA, '--file', dump);
    const lines = (await readFile(dump, 'utf8')).trimEnd().split('\n');
    await writeFile(join(dir, 'cut.jsonl'), `${lines.slice(0, -1).join('\n')}\n`);
    await writeFile(join(dir, 'short.jsonl'), `${[...lines.slice(0, 2), ...lines.slice(3)].join('\n')}\n`);
    const cut = await runCli(['import', '--database', pgDb.url, '--file', join(dir, 'cut.jsonl')]).catch((e) => e);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain('the dump has no end line');
    const short = await runCli(['import', '--database', pgDb.url, '--file', join(dir, 'short.jsonl')]).catch((e) => e);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("the dump's counts do not match its rows");
    expect(await cli('principal', 'list', '--database', pgDb.url)).toEqual([]);
  });
});
