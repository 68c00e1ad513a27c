import { afterEach, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleError } from '../errors/bubble-error.js';
import { hashToken } from '../domain/tokens.js';
import type { LiveBusMessage } from '../live/live-bus.js';
import type { BubbleStore, StoreOpenOptions } from './store.js';

/**
 * How the contract suite gets stores of one implementation. A location is
 * whatever identifies durable storage (a file path for SQLite, a schema for
 * PostgreSQL); opening the same location twice must see the same data.
 */
export interface StoreContractHarness {
  newLocation(): Promise<string>;
  open(location: string, options: StoreOpenOptions): Promise<BubbleStore>;
  dispose?(location: string): Promise<void>;
}

const codeOf = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof BubbleError ? error.code : `unexpected: ${String(error)}`;
  }
};

const seqs = (events: EventEnvelope[]): number[] => events.map((e) => e.seq);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The semantics every BubbleStore implementation must have. */
export function describeStoreContract(name: string, harness: StoreContractHarness): void {
  describe(`store contract: ${name}`, () => {
    const open: Array<{ store: BubbleStore; location: string }> = [];
    let messages: LiveBusMessage[] = [];

    const openStore = async (
      location?: string,
      now?: () => Date,
    ): Promise<{ store: BubbleStore; location: string }> => {
      const loc = location ?? (await harness.newLocation());
      const store = await harness.open(loc, { onCommit: (m) => messages.push(...m), now });
      const entry = { store, location: loc };
      open.push(entry);
      return entry;
    };
    const fresh = async (): Promise<BubbleStore> => (await openStore()).store;
    const human = (store: BubbleStore, id: string) =>
      store.createPrincipal({ principalId: id, kind: 'human', displayName: null, ownerPrincipalIds: [] });
    const thread = async (store: BubbleStore, by: string, parent: string | null = null, key: string | null = null) =>
      (
        await store.createThread({
          threadId: `th_${Math.random().toString(36).slice(2, 14)}`,
          parentThreadId: parent,
          title: 't',
          createdBy: by,
          key,
        })
      ).thread;
    const sub = async (store: BubbleStore, by: string, parent: string) =>
      (
        await store.createThread({
          threadId: `${parent}.sub-${Math.random().toString(36).slice(2, 7)}-abc`,
          parentThreadId: parent,
          title: null,
          createdBy: by,
          key: null,
        })
      ).thread;
    const note = (text: string, clientEventId?: string) => ({ type: 'acme.note', data: { text }, clientEventId });

    afterEach(async () => {
      for (const { store, location } of open.splice(0)) {
        await store.close();
        await harness.dispose?.(location);
      }
      messages = [];
    });

    describe('principals and tokens', () => {
      it('creates principals with owners and a default display name; a taken id conflicts', async () => {
        const store = await fresh();
        const alice = await human(store, 'alice');
        expect(alice).toMatchObject({
          principalId: 'alice',
          kind: 'human',
          displayName: 'alice',
          ownerPrincipalIds: [],
        });
        const bot = await store.createPrincipal({
          principalId: 'bot-a',
          kind: 'bot',
          displayName: 'Bot A',
          ownerPrincipalIds: ['alice'],
        });
        expect(bot.ownerPrincipalIds).toEqual(['alice']);
        expect(await store.getPrincipal('bot-a')).toEqual(bot);
        expect(await store.getPrincipal('nobody')).toBeNull();
        expect(await codeOf(human(store, 'alice'))).toBe('conflict');
      });

      it("keeps a bot's joinableBy (owners by default) and changes only the fields a patch names", async () => {
        const store = await fresh();
        const alice = await human(store, 'alice');
        expect(alice.joinableBy).toBeUndefined();
        const bot = await store.createPrincipal({
          principalId: 'bot-a',
          kind: 'bot',
          displayName: 'Bot A',
          ownerPrincipalIds: ['alice'],
        });
        expect(bot.joinableBy).toBe('owners');
        const open = await store.createPrincipal({
          principalId: 'bot-b',
          kind: 'bot',
          displayName: null,
          ownerPrincipalIds: ['alice'],
          joinableBy: 'anyone',
        });
        expect(open.joinableBy).toBe('anyone');
        expect(await store.updatePrincipal('bot-a', { joinableBy: 'anyone' })).toEqual({
          ...bot,
          joinableBy: 'anyone',
        });
        expect(await store.updatePrincipal('bot-a', { displayName: 'Renamed' })).toEqual({
          ...bot,
          joinableBy: 'anyone',
          displayName: 'Renamed',
        });
        expect(await store.getPrincipal('bot-a')).toMatchObject({ displayName: 'Renamed', joinableBy: 'anyone' });
        expect(await codeOf(store.updatePrincipal('nobody', { displayName: 'x' }))).toBe('not_found');
      });

      it('finds live tokens by hash and stops finding them once revoked', async () => {
        const store = await fresh();
        await store.createPrincipal(
          { principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] },
          {
            tokenId: 'tok_1',
            principalId: 'alice',
            hash: hashToken('secret-1'),
          },
        );
        await store.addToken({ tokenId: 'tok_2', principalId: 'alice', hash: hashToken('secret-2') });
        await store.addToken({ tokenId: 'tok_3', principalId: 'alice', hash: hashToken('secret-3') });
        expect((await store.findLiveTokenByHash(hashToken('secret-2')))?.tokenId).toBe('tok_2');
        expect(await store.findLiveTokenByHash(hashToken('nope'))).toBeNull();
        expect((await store.listTokens('alice')).map((t) => t.tokenId).sort()).toEqual(['tok_1', 'tok_2', 'tok_3']);

        messages = [];
        expect(await store.revokeTokens('alice', 'tok_2')).toEqual(['tok_2']);
        expect(await store.findLiveTokenByHash(hashToken('secret-2'))).toBeNull();
        expect(messages).toEqual([{ kind: 'tokens_revoked', principalId: 'alice', tokenIds: ['tok_2'] }]);
        expect(await store.revokeTokens('alice', 'tok_2')).toEqual([]);
        expect(await store.revokeTokens('bob', 'tok_1')).toEqual([]);
        expect((await store.revokeTokens('alice')).sort()).toEqual(['tok_1', 'tok_3']);
        expect(await store.listTokens('alice')).toEqual([]);
        expect(await store.findLiveTokenByHash(hashToken('secret-1'))).toBeNull();
      });
    });

    describe('people: the operator list, the revocation log, OIDC subjects', () => {
      it('lists every principal by id, and announces a changed principal', async () => {
        const store = await fresh();
        await human(store, 'carol');
        await human(store, 'alice');
        await store.createPrincipal({
          principalId: 'bot-a',
          kind: 'bot',
          displayName: 'Bot A',
          ownerPrincipalIds: ['carol'],
        });
        expect((await store.listPrincipals()).map((p) => p.principalId)).toEqual(['alice', 'bot-a', 'carol']);
        messages = [];
        const renamed = await store.updatePrincipal('bot-a', { displayName: 'Renamed' });
        expect(messages).toEqual([{ kind: 'principal_updated', principal: renamed }]);
      });

      it('logs every revocation, readable from another store on the same location (another process)', async () => {
        const first = await openStore();
        const store = first.store;
        const other = (await openStore(first.location)).store;
        await store.createPrincipal(
          { principalId: 'alice', kind: 'human', displayName: null, ownerPrincipalIds: [] },
          {
            tokenId: 'tok_1',
            principalId: 'alice',
            hash: hashToken('secret-1'),
          },
        );
        await store.addToken({ tokenId: 'tok_2', principalId: 'alice', hash: hashToken('secret-2') });
        const start = await other.tokenRevocationCursor();
        expect(start).toBe(0);
        await store.revokeTokens('alice', 'tok_2');
        await store.revokeTokens('alice', 'tok_2');
        await store.revokeTokens('alice');
        const seen = await other.readTokenRevocationsAfter(start, 100);
        expect(seen.map((r) => [r.principalId, r.tokenId])).toEqual([
          ['alice', 'tok_2'],
          ['alice', 'tok_1'],
        ]);
        expect(seen[1]!.cursor).toBeGreaterThan(seen[0]!.cursor);
        expect(await other.readTokenRevocationsAfter(seen[0]!.cursor, 100)).toEqual([seen[1]]);
        expect(await other.readTokenRevocationsAfter(seen[1]!.cursor, 100)).toEqual([]);
        expect(await store.readTokenRevocationsAfter(0, 1)).toEqual([seen[0]]);
        expect(await other.tokenRevocationCursor()).toBe(seen[1]!.cursor);
      });

      it('maps an OIDC subject to one principal for ever, created on first use with the first free id', async () => {
        const store = await fresh();
        await human(store, 'alice');
        const iss = 'https://idp.example/';
        expect(await store.findOidcSubject(iss, 'sub-1')).toBeNull();
        const first = await store.resolveOidcSubject({
          issuer: iss,
          subject: 'sub-1',
          idCandidates: ['system', 'alice', 'alice-2', 'alice-3'],
          nameClaim: 'Alice Two',
        });
        expect(first.created).toBe(true);
        expect(first.principal).toMatchObject({
          principalId: 'alice-2',
          kind: 'human',
          displayName: 'Alice Two',
          ownerPrincipalIds: [],
        });
        expect(await store.findOidcSubject(iss, 'sub-1')).toEqual({
          principal: first.principal,
          nameClaim: 'Alice Two',
          jwtsNotBefore: null,
        });

        messages = [];
        const again = await store.resolveOidcSubject({
          issuer: iss,
          subject: 'sub-1',
          idCandidates: ['zed'],
          nameClaim: 'Alice Two',
        });
        expect(again).toEqual({ principal: first.principal, created: false });
        const silent = await store.resolveOidcSubject({
          issuer: iss,
          subject: 'sub-1',
          idCandidates: ['zed'],
          nameClaim: null,
        });
        expect(silent.principal.displayName).toBe('Alice Two');
        expect(messages).toEqual([]);
        const renamed = await store.resolveOidcSubject({
          issuer: iss,
          subject: 'sub-1',
          idCandidates: ['zed'],
          nameClaim: 'Alice Liddell',
        });
        expect(renamed.principal).toMatchObject({ principalId: 'alice-2', displayName: 'Alice Liddell' });
        expect(messages).toEqual([{ kind: 'principal_updated', principal: renamed.principal }]);
        expect((await store.getPrincipal('alice-2'))?.displayName).toBe('Alice Liddell');

        const otherIssuer = await store.resolveOidcSubject({
          issuer: 'https://other.example',
          subject: 'sub-1',
          idCandidates: ['alice-2', 'alice-3'],
          nameClaim: null,
        });
        expect(otherIssuer.principal).toMatchObject({ principalId: 'alice-3', displayName: 'alice-3' });
        expect(
          await codeOf(
            store.resolveOidcSubject({
              issuer: iss,
              subject: 'sub-2',
              idCandidates: ['alice', 'system'],
              nameClaim: null,
            }),
          ),
        ).toBe('conflict');
      });

      it('ends every credential of a principal at once: its tokens and, for a person of an identity provider, its JWTs issued before now', async () => {
        const first = await openStore(undefined, () => new Date('2026-12-01T10:00:00.250Z'));
        const store = first.store;
        const other = (await openStore(first.location)).store;
        const iss = 'https://idp.example/';
        const { principal: zoe } = await store.resolveOidcSubject({
          issuer: iss,
          subject: 'zoe-sub',
          idCandidates: ['zoe'],
          nameClaim: 'Zoe',
        });
        expect(await store.findOidcSubject(iss, 'zoe-sub')).toEqual({
          principal: zoe,
          nameClaim: 'Zoe',
          jwtsNotBefore: null,
        });
        await store.addToken({ tokenId: 'tok_z', principalId: 'zoe', hash: hashToken('z-1') });
        await human(store, 'bob');
        await store.addToken({ tokenId: 'tok_b', principalId: 'bob', hash: hashToken('b-1') });
        const start = await other.tokenRevocationCursor();

        messages = [];
        expect(await store.revokeAllCredentials('zoe')).toEqual({
          revokedTokenIds: ['tok_z'],
          jwtsIssuedBefore: '2026-12-01T10:00:00.250Z',
        });
        expect(messages).toEqual([
          { kind: 'tokens_revoked', principalId: 'zoe', tokenIds: ['tok_z'] },
          { kind: 'jwts_revoked', principalId: 'zoe', issuedBefore: '2026-12-01T10:00:00.250Z' },
        ]);
        expect(await store.findOidcSubject(iss, 'zoe-sub')).toEqual({
          principal: zoe,
          nameClaim: 'Zoe',
          jwtsNotBefore: '2026-12-01T10:00:00.250Z',
        });
        // Another process reads both from the log: the token, and an entry without a token id for the JWTs.
        expect(
          (await other.readTokenRevocationsAfter(start, 10)).map((r) => [r.principalId, r.tokenId, r.revokedAt]),
        ).toEqual([
          ['zoe', 'tok_z', '2026-12-01T10:00:00.250Z'],
          ['zoe', null, '2026-12-01T10:00:00.250Z'],
        ]);
        // A principal no JWT maps to: its tokens only. revokeTokens without a token id does the same as revokeAllCredentials.
        messages = [];
        expect(await store.revokeTokens('bob')).toEqual(['tok_b']);
        expect(messages).toEqual([{ kind: 'tokens_revoked', principalId: 'bob', tokenIds: ['tok_b'] }]);
        expect(await store.revokeAllCredentials('bob')).toEqual({ revokedTokenIds: [], jwtsIssuedBefore: null });
        expect((await other.readTokenRevocationsAfter(start, 10)).map((r) => r.tokenId)).toEqual([
          'tok_z',
          null,
          'tok_b',
        ]);
        // Revoking a single token ends no JWT.
        await store.addToken({ tokenId: 'tok_z2', principalId: 'zoe', hash: hashToken('z-2') });
        messages = [];
        expect(await store.revokeTokens('zoe', 'tok_z2')).toEqual(['tok_z2']);
        expect(messages.map((m) => m.kind)).toEqual(['tokens_revoked']);
      });

      it('creates the principal of a first sign-in that shares a group commit with a failing write', async () => {
        const store = await fresh();
        // The sign-in's job runs first; the refused one after it makes the group run both again (each in a savepoint).
        const signIn = store.resolveOidcSubject({
          issuer: 'https://idp',
          subject: 's',
          idCandidates: ['bob', 'bob-2'],
          nameClaim: 'Bob',
        });
        const failing = store.acceptInvite({ hash: hashToken('never-minted'), principalId: 'nobody' });
        expect(await codeOf(failing)).toBe('not_found');
        expect((await signIn).principal.principalId).toBe('bob');
      });

      it('creates one principal when the first sign-ins of a subject race', async () => {
        const store = await fresh();
        const results = await Promise.all(
          Array.from({ length: 5 }, () =>
            store.resolveOidcSubject({
              issuer: 'https://idp',
              subject: 's',
              idCandidates: ['bob', 'bob-2', 'bob-3'],
              nameClaim: 'Bob',
            }),
          ),
        );
        expect(new Set(results.map((r) => r.principal.principalId))).toEqual(new Set(['bob']));
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect((await store.listPrincipals()).map((p) => p.principalId)).toEqual(['bob']);
      });
    });

    describe('invites', () => {
      let clock = new Date('2026-12-01T10:00:00.000Z');
      const at = () => clock;
      const invite = (
        threadId: string,
        over: Partial<{
          role: 'owner' | 'member';
          maxUses: number;
          expiresAt: string;
          createdBy: string;
          secret: string;
        }> = {},
      ) =>
        ({
          inviteId: `inv_${Math.random().toString(36).slice(2, 10)}`,
          threadId,
          role: over.role ?? 'member',
          createdBy: over.createdBy ?? 'alice',
          hash: hashToken(over.secret ?? `secret-${Math.random()}`),
          expiresAt: over.expiresAt ?? '2026-12-08T10:00:00.000Z',
          maxUses: over.maxUses ?? 1,
        }) as const;

      it('creates, lists open invites, and accepts one: the grant by the inviter, one use counted', async () => {
        clock = new Date('2026-12-01T10:00:00.000Z');
        const { store } = await openStore(undefined, at);
        for (const id of ['alice', 'bob', 'carol']) await human(store, id);
        const t = await thread(store, 'alice');
        const created = await store.createInvite({ ...invite(t.threadId, { secret: 'tok-a', maxUses: 2 }) });
        expect(created).toEqual({
          inviteId: expect.stringMatching(/^inv_/),
          threadId: t.threadId,
          role: 'member',
          createdBy: 'alice',
          expiresAt: '2026-12-08T10:00:00.000Z',
          maxUses: 2,
          uses: 0,
        });
        expect(await store.listOpenInvites(t.threadId)).toEqual([created]);
        expect(await codeOf(store.createInvite(invite('th_missing')))).toBe('not_found');

        messages = [];
        const accepted = await store.acceptInvite({ hash: hashToken('tok-a'), principalId: 'bob' });
        expect(accepted.change).toBe('created');
        expect(accepted.grant).toMatchObject({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          grantedBy: 'alice',
          joinedSeq: 2,
        });
        const { events } = await store.readEventsAfter(t.threadId, 1, 10);
        expect(events).toEqual([
          expect.objectContaining({
            seq: 2,
            type: 'participant_added',
            principalId: 'system',
            data: { principalId: 'bob', role: 'member', by: 'alice' },
          }),
        ]);
        expect(messages.map((m) => m.kind)).toEqual(['events', 'grant']);

        // The same person again: told they are in, no use spent, no event.
        expect(await store.acceptInvite({ hash: hashToken('tok-a'), principalId: 'bob' })).toEqual({
          grant: accepted.grant,
          change: 'unchanged',
        });
        expect((await store.listOpenInvites(t.threadId))[0]?.uses).toBe(1);
        expect((await store.acceptInvite({ hash: hashToken('tok-a'), principalId: 'carol' })).change).toBe('created');
        // Used up: gone from the list and 404 for everyone, those who joined with it included (protocol.md).
        expect(await store.listOpenInvites(t.threadId)).toEqual([]);
        await human(store, 'dave');
        expect(await codeOf(store.acceptInvite({ hash: hashToken('tok-a'), principalId: 'dave' }))).toBe('not_found');
        expect(await codeOf(store.acceptInvite({ hash: hashToken('tok-a'), principalId: 'carol' }))).toBe('not_found');
        expect(await codeOf(store.acceptInvite({ hash: hashToken('tok-a'), principalId: 'alice' }))).toBe('not_found');
        expect((await store.listLiveGrantsOnThread(t.threadId)).map((g) => g.principalId).sort()).toEqual([
          'alice',
          'bob',
          'carol',
        ]);
        expect(await codeOf(store.acceptInvite({ hash: hashToken('never-minted'), principalId: 'dave' }))).toBe(
          'not_found',
        );
      });

      it('refuses revoked and expired invites and those whose creator is no longer an owner; never lowers a role', async () => {
        clock = new Date('2026-12-01T10:00:00.000Z');
        const { store } = await openStore(undefined, at);
        for (const id of ['alice', 'bob', 'carol']) await human(store, id);
        const t = await thread(store, 'alice');
        const revoked = await store.createInvite(invite(t.threadId, { secret: 'r' }));
        expect(await store.revokeInvite(t.threadId, revoked.inviteId)).toBe(true);
        expect(await store.revokeInvite(t.threadId, revoked.inviteId)).toBe(false);
        expect(await store.revokeInvite('th_other', revoked.inviteId)).toBe(false);
        expect(await codeOf(store.acceptInvite({ hash: hashToken('r'), principalId: 'bob' }))).toBe('not_found');

        await store.createInvite(invite(t.threadId, { secret: 'e', expiresAt: '2026-12-01T11:00:00.000Z' }));
        clock = new Date('2026-12-01T11:00:00.000Z');
        expect(await store.listOpenInvites(t.threadId)).toEqual([]);
        expect(await codeOf(store.acceptInvite({ hash: hashToken('e'), principalId: 'bob' }))).toBe('not_found');

        await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'owner',
          by: 'alice',
          mayChangeRole: true,
        });
        const bobs = await store.createInvite(invite(t.threadId, { secret: 'b', createdBy: 'bob', maxUses: 5 }));
        const promote = await store.createInvite(invite(t.threadId, { secret: 'p', role: 'owner', maxUses: 5 }));
        expect((await store.listOpenInvites(t.threadId)).map((i) => i.inviteId)).toEqual([
          bobs.inviteId,
          promote.inviteId,
        ]);
        expect((await store.acceptInvite({ hash: hashToken('b'), principalId: 'alice' })).change).toBe('unchanged');
        await store.revokeGrant({ threadId: t.threadId, principalId: 'bob', by: 'alice' });
        expect((await store.listOpenInvites(t.threadId)).map((i) => i.inviteId)).toEqual([promote.inviteId]);
        expect(await codeOf(store.acceptInvite({ hash: hashToken('b'), principalId: 'carol' }))).toBe('not_found');

        await store.putGrant({
          threadId: t.threadId,
          principalId: 'carol',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        const promoted = await store.acceptInvite({ hash: hashToken('p'), principalId: 'carol' });
        expect(promoted.change).toBe('role_changed');
        expect(promoted.grant.role).toBe('owner');
      });

      it('counts uses atomically: of 12 people racing for 3 uses, exactly 3 get in', async () => {
        const store = await fresh();
        await human(store, 'alice');
        const people = Array.from({ length: 12 }, (_, i) => `p${i}x`);
        for (const id of people) await human(store, id);
        const t = await thread(store, 'alice');
        await store.createInvite(
          invite(t.threadId, { secret: 'race', maxUses: 3, expiresAt: '2999-01-01T00:00:00.000Z' }),
        );
        const results = await Promise.allSettled(
          people.map((id) => store.acceptInvite({ hash: hashToken('race'), principalId: id })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
        expect((await store.listLiveGrantsOnThread(t.threadId)).length).toBe(4);
      });
    });

    describe('threads and grants', () => {
      it('starts a thread with the creator as owner at seq 1, by system, and announces it after commit', async () => {
        const store = await fresh();
        await human(store, 'alice');
        messages = [];
        const t = await thread(store, 'alice');
        expect(t.headSeq).toBe(1);
        const { events } = await store.readEventsAfter(t.threadId, 0, 10);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({
          seq: 1,
          type: 'participant_added',
          principalId: 'system',
          data: { principalId: 'alice', role: 'owner', by: 'alice' },
        });
        const grants = await store.listLiveGrantsOnThread(t.threadId);
        expect(grants).toEqual([
          expect.objectContaining({ principalId: 'alice', role: 'owner', joinedSeq: 1, revokedAt: null }),
        ]);
        expect(messages.map((m) => m.kind)).toEqual(['events', 'grant']);
      });

      it('returns the same thread for the same creator, parent and key, and a new one otherwise', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const parent = await thread(store, 'alice');
        const a = await store.createThread({
          threadId: 'th_k1',
          parentThreadId: parent.threadId,
          title: null,
          createdBy: 'alice',
          key: 'k',
        });
        const again = await store.createThread({
          threadId: 'th_k2',
          parentThreadId: parent.threadId,
          title: 'other',
          createdBy: 'alice',
          key: 'k',
        });
        expect(a.created).toBe(true);
        expect(again).toEqual({ thread: a.thread, created: false });
        const otherCreator = await store.createThread({
          threadId: 'th_k3',
          parentThreadId: parent.threadId,
          title: null,
          createdBy: 'bob',
          key: 'k',
        });
        const otherParent = await store.createThread({
          threadId: 'th_k4',
          parentThreadId: null,
          title: null,
          createdBy: 'alice',
          key: 'k',
        });
        const topAgain = await store.createThread({
          threadId: 'th_k5',
          parentThreadId: null,
          title: null,
          createdBy: 'alice',
          key: 'k',
        });
        expect(otherCreator.created).toBe(true);
        expect(otherParent.created).toBe(true);
        expect(topAgain).toEqual({ thread: otherParent.thread, created: false });
        expect(
          await codeOf(
            store.createThread({
              threadId: 'th_k6',
              parentThreadId: 'th_missing',
              title: null,
              createdBy: 'alice',
              key: null,
            }),
          ),
        ).toBe('not_found');
      });

      it('makes subthreads readable through any ancestor grant', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const top = await thread(store, 'alice');
        const child = await sub(store, 'alice', top.threadId);
        const grandchild = await sub(store, 'alice', child.threadId);
        expect(await store.getThreadAccess('th_missing', 'alice')).toBeNull();
        expect(await store.getThreadAccess(grandchild.threadId, 'bob')).toMatchObject({
          ownGrant: null,
          ancestorGrant: false,
        });
        await store.putGrant({
          threadId: top.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        expect(await store.getThreadAccess(grandchild.threadId, 'bob')).toMatchObject({
          ownGrant: null,
          ancestorGrant: true,
        });
        expect(await store.getThreadAccess(top.threadId, 'bob')).toMatchObject({
          ownGrant: { role: 'member' },
          ancestorGrant: false,
        });
      });

      it('records joinedSeq as the seq of the participant_added event, changes roles only when allowed, and revokes', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const t = await thread(store, 'alice');
        await store.appendEvents({ threadId: t.threadId, principalId: 'alice', events: [note('a'), note('b')] });
        const added = await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        expect(added.change).toBe('created');
        expect(added.grant).toMatchObject({ joinedSeq: 4, grantedBy: 'alice', role: 'member', revokedAt: null });
        const { events } = await store.readEventsAfter(t.threadId, 3, 10);
        expect(events[0]).toMatchObject({
          seq: 4,
          type: 'participant_added',
          principalId: 'system',
          data: { principalId: 'bob', role: 'member', by: 'alice' },
        });

        const same = await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'owner',
          by: 'bob',
          mayChangeRole: false,
        });
        expect(same).toEqual({ grant: added.grant, change: 'unchanged' });
        const promoted = await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'owner',
          by: 'alice',
          mayChangeRole: true,
        });
        expect(promoted.change).toBe('role_changed');
        expect(promoted.grant).toMatchObject({ role: 'owner', joinedSeq: 4 });

        messages = [];
        const revoked = await store.revokeGrant({ threadId: t.threadId, principalId: 'bob', by: 'alice' });
        expect(revoked).toMatchObject({ principalId: 'bob', role: 'owner' });
        expect(revoked?.revokedAt).not.toBeNull();
        expect(messages.map((m) => m.kind)).toEqual(['events', 'grant']);
        const removed = await store.readEventsAfter(t.threadId, 5, 10);
        expect(removed.events[0]).toMatchObject({
          type: 'participant_removed',
          principalId: 'system',
          data: { principalId: 'bob', role: 'owner', by: 'alice' },
        });
        expect(await store.revokeGrant({ threadId: t.threadId, principalId: 'bob', by: 'alice' })).toBeNull();
        expect(await store.listLiveGrantsOfPrincipal('bob')).toEqual([]);
        expect((await store.listLiveGrantsOnThread(t.threadId)).map((g) => g.principalId)).toEqual(['alice']);

        const again = await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        expect(again.change).toBe('created');
        expect(again.grant.joinedSeq).toBe(7);
        expect((await store.listThreadsWithLiveGrant('bob')).map((x) => x.threadId)).toEqual([t.threadId]);
      });
    });

    describe('visibility', () => {
      it('shows self, owners, owned principals and co-readers, and nobody else', async () => {
        const store = await fresh();
        for (const id of ['alice', 'bob', 'carol', 'dave']) await human(store, id);
        await store.createPrincipal({
          principalId: 'bot-a',
          kind: 'bot',
          displayName: 'Research Bot',
          ownerPrincipalIds: ['alice'],
        });
        const visible = async (viewer: string) =>
          (await store.searchVisiblePrincipals(viewer, '', 100)).map((p) => p.principalId);
        expect(await visible('alice')).toEqual(['alice', 'bot-a']);
        expect(await visible('bot-a')).toEqual(['alice', 'bot-a']);
        expect(await visible('bob')).toEqual(['bob']);

        const t = await thread(store, 'alice');
        await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        const child = await sub(store, 'carol', t.threadId);
        expect(await visible('bob')).toEqual(['alice', 'bob', 'carol']);
        expect(await store.isPrincipalVisible('bob', 'carol')).toBe(true);
        expect(await store.isPrincipalVisible('bob', 'dave')).toBe(false);
        expect(await store.isPrincipalVisible('carol', 'bob')).toBe(false);
        expect(await store.isPrincipalVisible('bob', 'nobody')).toBe(false);
        expect(child.parentThreadId).toBe(t.threadId);

        await store.revokeGrant({ threadId: t.threadId, principalId: 'bob', by: 'bob' });
        expect(await visible('bob')).toEqual(['bob']);
      });

      it('searches id and display name, case-insensitively, up to the limit', async () => {
        const store = await fresh();
        await human(store, 'alice');
        for (const id of ['bot-a', 'bot-b', 'bot-c']) {
          await store.createPrincipal({
            principalId: id,
            kind: 'bot',
            displayName: id === 'bot-b' ? 'Research Helper' : null,
            ownerPrincipalIds: ['alice'],
          });
        }
        expect((await store.searchVisiblePrincipals('alice', 'RESEARCH', 10)).map((p) => p.principalId)).toEqual([
          'bot-b',
        ]);
        expect((await store.searchVisiblePrincipals('alice', 'bot', 2)).map((p) => p.principalId)).toEqual([
          'bot-a',
          'bot-b',
        ]);
      });
    });

    describe('events', () => {
      it('keeps per-thread seqs gapless and unique under concurrent appenders, published in seq order', async () => {
        const store = await fresh();
        const writers = ['w1', 'w2', 'w3', 'w4'];
        await human(store, 'alice');
        for (const w of writers) await human(store, w);
        const t = await thread(store, 'alice');
        const other = await thread(store, 'alice');
        for (const w of writers)
          await store.putGrant({
            threadId: t.threadId,
            principalId: w,
            role: 'member',
            by: 'alice',
            mayChangeRole: false,
          });
        const base = (await store.getThread(t.threadId))!.headSeq;
        messages = [];
        const results = await Promise.all(
          Array.from({ length: 200 }, (_, i) => {
            const who = writers[i % writers.length]!;
            const batch = i % 5 === 0 ? [note(`${i}a`), note(`${i}b`)] : [note(`${i}`)];
            return Promise.all([
              store.appendEvents({ threadId: t.threadId, principalId: who, events: batch }),
              store.appendEvents({ threadId: other.threadId, principalId: 'alice', events: [note(`${i}`)] }),
            ]);
          }),
        );
        const mine = results.flatMap(([r]) => seqs(r.events)).sort((a, b) => a - b);
        expect(mine).toEqual(range(base + 1, base + 240));
        for (const [r] of results) {
          const s = seqs(r.events);
          if (s.length === 2) expect(s[1]).toBe(s[0]! + 1);
        }
        const all = await store.readEventsAfter(t.threadId, 0, 1000);
        expect(seqs(all.events)).toEqual(range(1, base + 240));
        expect(all.headSeq).toBe(base + 240);
        const published = messages.flatMap((m) =>
          m.kind === 'events' && m.threadId === t.threadId ? seqs(m.events) : [],
        );
        expect(published).toEqual(range(base + 1, base + 240));
        const otherPublished = messages.flatMap((m) =>
          m.kind === 'events' && m.threadId === other.threadId ? seqs(m.events) : [],
        );
        expect(otherPublished).toEqual(range(2, 201));
      });

      it('stores the author given and refuses principals without a live grant', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const t = await thread(store, 'alice');
        const [e] = (await store.appendEvents({ threadId: t.threadId, principalId: 'alice', events: [note('hi')] }))
          .events;
        expect(e).toMatchObject({
          threadId: t.threadId,
          seq: 2,
          type: 'acme.note',
          principalId: 'alice',
          data: { text: 'hi' },
          clientEventId: null,
        });
        expect(e?.id).toMatch(/^ev_/);
        expect(
          await codeOf(store.appendEvents({ threadId: t.threadId, principalId: 'bob', events: [note('x')] })),
        ).toBe('forbidden');
        expect(
          await codeOf(store.appendEvents({ threadId: 'th_missing', principalId: 'alice', events: [note('x')] })),
        ).toBe('not_found');
      });

      it('replays a clientEventId with the same body, and refuses it with another body', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const t = await thread(store, 'alice');
        await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        const first = await store.appendEvents({
          threadId: t.threadId,
          principalId: 'alice',
          events: [{ type: 'acme.note', data: { a: 1, b: 2 }, clientEventId: 'c-1' }],
        });
        expect(first.replay).toBe(false);
        const again = await store.appendEvents({
          threadId: t.threadId,
          principalId: 'alice',
          events: [{ type: 'acme.note', data: { b: 2, a: 1 }, clientEventId: 'c-1' }],
        });
        expect(again).toEqual({ events: first.events, replay: true });
        const mixed = await store.appendEvents({
          threadId: t.threadId,
          principalId: 'alice',
          events: [{ type: 'acme.note', data: { a: 1, b: 2 }, clientEventId: 'c-1' }, note('new', 'c-2')],
        });
        expect(mixed.replay).toBe(false);
        expect(seqs(mixed.events)).toEqual([first.events[0]!.seq, first.events[0]!.seq + 1]);
        expect(
          await codeOf(
            store.appendEvents({
              threadId: t.threadId,
              principalId: 'alice',
              events: [{ type: 'acme.note', data: { a: 2 }, clientEventId: 'c-1' }],
            }),
          ),
        ).toBe('conflict');
        expect(
          await codeOf(
            store.appendEvents({
              threadId: t.threadId,
              principalId: 'alice',
              events: [{ type: 'acme.other', data: { a: 1, b: 2 }, clientEventId: 'c-1' }],
            }),
          ),
        ).toBe('conflict');
        const bobs = await store.appendEvents({
          threadId: t.threadId,
          principalId: 'bob',
          events: [{ type: 'acme.note', data: { a: 1, b: 2 }, clientEventId: 'c-1' }],
        });
        expect(bobs.replay).toBe(false);
        expect(bobs.events[0]!.seq).toBe(first.events[0]!.seq + 2);
      });

      it('lands a batch atomically: one refused event lands nothing, and other requests in the same commit are unaffected', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const t = await thread(store, 'alice');
        await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        await store.appendEvents({
          threadId: t.threadId,
          principalId: 'bob',
          events: [{ type: 'run_started', data: { runId: 'r-bob' } }],
        });
        const head = (await store.getThread(t.threadId))!.headSeq;
        const [bad, good] = await Promise.allSettled([
          store.appendEvents({
            threadId: t.threadId,
            principalId: 'alice',
            events: [
              note('1', 'x-1'),
              { type: 'run_started', data: { runId: 'r-a' } },
              { type: 'message_part', data: { runId: 'r-bob', chunk: { type: 'text-start', id: 't' } } },
            ],
          }),
          store.appendEvents({ threadId: t.threadId, principalId: 'alice', events: [note('ok')] }),
        ]);
        expect(bad.status).toBe('rejected');
        expect(bad.status === 'rejected' && bad.reason instanceof BubbleError && bad.reason.code).toBe('forbidden');
        expect(good.status === 'fulfilled' && seqs(good.value.events)).toEqual([head + 1]);
        const after = await store.readEventsAfter(t.threadId, head, 100);
        expect(after.events.map((e) => e.data)).toEqual([{ text: 'ok' }]);
        // Nothing of the refused batch was kept: its clientEventId and its run are still free.
        const retry = await store.appendEvents({
          threadId: t.threadId,
          principalId: 'alice',
          events: [note('1', 'x-1'), { type: 'run_started', data: { runId: 'r-a' } }],
        });
        expect(retry.replay).toBe(false);
        expect(seqs(retry.events)).toEqual([head + 2, head + 3]);
      });

      it('enforces run ownership and the open-once, close-once rules', async () => {
        const store = await fresh();
        await human(store, 'alice');
        await human(store, 'bob');
        const t = await thread(store, 'alice');
        await store.putGrant({
          threadId: t.threadId,
          principalId: 'bob',
          role: 'member',
          by: 'alice',
          mayChangeRole: false,
        });
        const ev = (type: string, data: Record<string, unknown>) => [{ type, data }];
        const part = { runId: 'r1', chunk: { type: 'text-delta', id: 't', delta: 'x' } };
        const as = (who: string, events: Array<{ type: string; data: Record<string, unknown> }>) =>
          codeOf(store.appendEvents({ threadId: t.threadId, principalId: who, events }));
        expect(await as('alice', ev('run_started', { runId: 'r1' }))).toBe('ok');
        expect(await as('bob', ev('message_part', part))).toBe('forbidden');
        expect(await as('alice', ev('run_started', { runId: 'r1' }))).toBe('conflict');
        expect(await as('alice', ev('message_part', part))).toBe('ok');
        expect(await as('bob', ev('run_finished', { runId: 'r1', status: 'completed' }))).toBe('forbidden');
        expect(await as('alice', ev('run_finished', { runId: 'r1', status: 'completed' }))).toBe('ok');
        expect(await as('alice', ev('message_part', part))).toBe('conflict');
        expect(await as('alice', ev('run_finished', { runId: 'r1', status: 'completed' }))).toBe('conflict');
        expect(await as('alice', ev('run_started', { runId: 'r1' }))).toBe('conflict');
        expect(await as('bob', ev('run_interrupt_requested', { runId: 'r1' }))).toBe('ok');
        expect(await as('bob', ev('message_part', { runId: 'r2', chunk: { type: 'text-start', id: 't' } }))).toBe('ok');
        expect(await as('alice', ev('run_started', { runId: 'r2' }))).toBe('forbidden');
        expect(await as('bob', ev('run_started', { runId: 'r2' }))).toBe('ok');
      });

      it('reads pages after and before a seq, ascending', async () => {
        const store = await fresh();
        await human(store, 'alice');
        const t = await thread(store, 'alice');
        await store.appendEvents({
          threadId: t.threadId,
          principalId: 'alice',
          events: range(1, 9).map((i) => note(String(i))),
        });
        expect(seqs((await store.readEventsAfter(t.threadId, 3, 4)).events)).toEqual([4, 5, 6, 7]);
        expect(seqs((await store.readEventsAfter(t.threadId, 10, 4)).events)).toEqual([]);
        const before = await store.readEventsBefore(t.threadId, 6, 3);
        expect(seqs(before.events)).toEqual([3, 4, 5]);
        expect(before.headSeq).toBe(10);
        expect(seqs((await store.readEventsBefore(t.threadId, 3, 10)).events)).toEqual([1, 2]);
      });
    });

    describe('cursors and artifacts', () => {
      it('moves cursors forward only', async () => {
        const store = await fresh();
        await human(store, 'alice');
        const t = await thread(store, 'alice');
        expect(await store.getCursor(t.threadId, 'alice')).toBe(0);
        expect(await store.putCursor(t.threadId, 'alice', 5)).toBe(5);
        expect(await store.putCursor(t.threadId, 'alice', 3)).toBe(5);
        expect(await store.getCursor(t.threadId, 'alice')).toBe(5);
        expect(await store.putCursor(t.threadId, 'alice', 7)).toBe(7);
      });

      it('versions artifacts, refuses a stale baseVersion, and logs artifact_updated by system', async () => {
        const store = await fresh();
        await human(store, 'alice');
        const t = await thread(store, 'alice');
        const v1 = await store.putArtifact({
          threadId: t.threadId,
          name: 'plan.md',
          content: 'héllo',
          mediaType: 'text/markdown',
          by: 'alice',
        });
        expect(v1).toMatchObject({ version: 1, size: 6, updatedBy: 'alice', content: 'héllo' });
        expect(
          await codeOf(
            store.putArtifact({
              threadId: t.threadId,
              name: 'plan.md',
              content: 'x',
              mediaType: 'text/plain',
              baseVersion: 0,
              by: 'alice',
            }),
          ),
        ).toBe('conflict');
        const v2 = await store.putArtifact({
          threadId: t.threadId,
          name: 'plan.md',
          content: 'v2',
          mediaType: 'text/plain',
          baseVersion: 1,
          by: 'alice',
        });
        expect(v2.version).toBe(2);
        await store.putArtifact({
          threadId: t.threadId,
          name: 'a.txt',
          content: '',
          mediaType: 'text/plain',
          baseVersion: 0,
          by: 'alice',
        });
        expect((await store.listArtifacts(t.threadId)).map((a) => [a.name, a.version])).toEqual([
          ['a.txt', 1],
          ['plan.md', 2],
        ]);
        expect((await store.getArtifact(t.threadId, 'plan.md'))?.content).toBe('v2');
        expect((await store.getArtifact(t.threadId, 'plan.md', 1))?.content).toBe('héllo');
        expect(await store.getArtifact(t.threadId, 'plan.md', 3)).toBeNull();
        expect(await store.getArtifact(t.threadId, 'nope.md')).toBeNull();
        const events = (await store.readEventsAfter(t.threadId, 1, 10)).events;
        expect(events.map((e) => [e.type, e.principalId, e.data.name, e.data.version])).toEqual([
          ['artifact_updated', 'system', 'plan.md', 1],
          ['artifact_updated', 'system', 'plan.md', 2],
          ['artifact_updated', 'system', 'a.txt', 1],
        ]);
      });
    });

    it('keeps everything across a restart on the same location and continues the seqs', async () => {
      const first = await openStore();
      const store = first.store;
      await store.createPrincipal(
        { principalId: 'alice', kind: 'human', displayName: 'Alice', ownerPrincipalIds: [] },
        {
          tokenId: 'tok_a',
          principalId: 'alice',
          hash: hashToken('alice-secret'),
        },
      );
      const t = await thread(store, 'alice', null, 'key-1');
      await store.appendEvents({
        threadId: t.threadId,
        principalId: 'alice',
        events: [note('1', 'c-1'), { type: 'run_started', data: { runId: 'r1' } }],
      });
      await store.putCursor(t.threadId, 'alice', 2);
      await store.putArtifact({
        threadId: t.threadId,
        name: 'doc',
        content: 'body',
        mediaType: 'text/plain',
        by: 'alice',
      });
      const before = await store.readEventsAfter(t.threadId, 0, 100);
      await store.close();
      open.splice(open.indexOf(first), 1);

      const { store: reopened } = await openStore(first.location);
      expect(await reopened.getPrincipal('alice')).toMatchObject({ displayName: 'Alice' });
      expect((await reopened.findLiveTokenByHash(hashToken('alice-secret')))?.tokenId).toBe('tok_a');
      expect(await reopened.readEventsAfter(t.threadId, 0, 100)).toEqual(before);
      expect(await reopened.getCursor(t.threadId, 'alice')).toBe(2);
      expect((await reopened.getArtifact(t.threadId, 'doc'))?.content).toBe('body');
      const again = await reopened.createThread({
        threadId: 'th_other',
        parentThreadId: null,
        title: null,
        createdBy: 'alice',
        key: 'key-1',
      });
      expect(again.created).toBe(false);
      const replay = await reopened.appendEvents({
        threadId: t.threadId,
        principalId: 'alice',
        events: [note('1', 'c-1')],
      });
      expect(replay.replay).toBe(true);
      expect(
        await codeOf(
          reopened.appendEvents({
            threadId: t.threadId,
            principalId: 'alice',
            events: [{ type: 'run_started', data: { runId: 'r1' } }],
          }),
        ),
      ).toBe('conflict');
      const next = await reopened.appendEvents({
        threadId: t.threadId,
        principalId: 'alice',
        events: [note('after restart')],
      });
      expect(seqs(next.events)).toEqual([before.headSeq + 1]);
    });
  });
}
