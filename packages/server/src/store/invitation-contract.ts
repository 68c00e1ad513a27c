import { afterEach, describe, expect, it } from 'vitest';
import { BubbleError } from '../errors/bubble-error.js';
import type { LiveBusMessage } from '../live/live-bus.js';
import type { StoreContractHarness } from './store-contract.js';
import type { BubbleStore } from './store.js';

const codeOf = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return error instanceof BubbleError ? error.code : `unexpected: ${String(error)}`;
  }
};

/** Pending invitations (protocol.md, Consent), the same on every store. */
export function describeInvitationContract(name: string, harness: StoreContractHarness): void {
  describe(`invitation contract: ${name}`, () => {
    const open: Array<{ store: BubbleStore; location: string }> = [];
    let messages: LiveBusMessage[] = [];
    /** The stores' clock: tests move it. */
    let clock = new Date('2026-12-01T10:00:00.000Z');
    const advance = (ms: number) => {
      clock = new Date(clock.getTime() + ms);
    };

    const fresh = async (): Promise<BubbleStore> => {
      const location = await harness.newLocation();
      const store = await harness.open(location, { onCommit: (m) => messages.push(...m), now: () => clock });
      open.push({ store, location });
      return store;
    };
    afterEach(async () => {
      for (const { store, location } of open.splice(0)) {
        await store.close();
        await harness.dispose?.(location);
      }
      messages = [];
      clock = new Date('2026-12-01T10:00:00.000Z');
    });

    const human = (store: BubbleStore, id: string) =>
      store.createPrincipal({ principalId: id, kind: 'human', displayName: null, ownerPrincipalIds: [] });
    let n = 0;
    const thread = async (store: BubbleStore, by: string, title: string | null = 'plans') => {
      n += 1;
      return (
        await store.createThread({ threadId: `th_inv${n}`, parentThreadId: null, title, createdBy: by, key: null })
      ).thread.threadId;
    };
    const invite = (store: BubbleStore, threadId: string, principalId: string, invitedBy = 'alice', role = 'member') =>
      store.inviteToThread({ threadId, principalId, role: role as 'member', invitedBy, maxPending: 100 });
    /** Alice, bob, a bot of alice's, and a thread of alice's. */
    const world = async () => {
      const store = await fresh();
      await human(store, 'alice');
      await human(store, 'bob');
      await store.createPrincipal({
        principalId: 'bot-a',
        kind: 'bot',
        displayName: null,
        ownerPrincipalIds: ['alice'],
      });
      return { store, t: await thread(store, 'alice') };
    };

    it('invites a person without disclosing anything: no grant, no event, no live message, no visibility', async () => {
      const { store, t } = await world();
      messages = [];
      await invite(store, t, 'bob');
      expect(messages).toEqual([]);
      expect((await store.listLiveGrantsOnThread(t)).map((g) => g.principalId)).toEqual(['alice']);
      expect(await store.listThreadsWithLiveGrant('bob')).toEqual([]);
      expect((await store.readEventsAfter(t, 0, 100)).headSeq).toBe(1);
      expect(await store.isPrincipalVisible('alice', 'bob')).toBe(false);
      expect(await store.isPrincipalVisible('bob', 'alice')).toBe(false);
      expect(await store.listPendingInvitations('bob')).toEqual([
        { threadId: t, title: 'plans', invitedBy: 'alice', role: 'member', createdAt: clock.toISOString() },
      ]);
    });

    it('writes nothing for a bot, an unknown id, or someone already on the thread', async () => {
      const { store, t } = await world();
      await invite(store, t, 'bot-a');
      await invite(store, t, 'nobody');
      await invite(store, t, 'alice', 'alice');
      for (const id of ['bot-a', 'nobody', 'alice']) expect(await store.listPendingInvitations(id)).toEqual([]);
      expect(await codeOf(store.acceptInvitation({ threadId: t, principalId: 'bot-a' }))).toBe('not_found');
      expect(await codeOf(invite(store, 'th_nowhere', 'bob'))).toBe('not_found');
    });

    it('turns an accepted invitation into a grant by the inviter, once', async () => {
      const { store, t } = await world();
      await invite(store, t, 'bob');
      advance(1000);
      messages = [];
      const { grant, change } = await store.acceptInvitation({ threadId: t, principalId: 'bob' });
      expect(change).toBe('created');
      expect(grant).toMatchObject({
        threadId: t,
        principalId: 'bob',
        role: 'member',
        grantedBy: 'alice',
        joinedSeq: 2,
      });
      const [event] = (await store.readEventsAfter(t, 1, 10)).events;
      expect(event).toMatchObject({
        type: 'participant_added',
        principalId: 'system',
        data: { principalId: 'bob', role: 'member', by: 'alice' },
      });
      expect(messages.map((m) => m.kind)).toEqual(['events', 'grant']);
      expect(await store.listPendingInvitations('bob')).toEqual([]);
      expect(await codeOf(store.acceptInvitation({ threadId: t, principalId: 'bob' }))).toBe('not_found');
      expect(await store.isPrincipalVisible('alice', 'bob')).toBe(true);
    });

    it('drops a declined invitation; declining or accepting again finds none', async () => {
      const { store, t } = await world();
      await invite(store, t, 'bob');
      expect(await store.declineInvitation({ threadId: t, principalId: 'bob' })).toBe(true);
      expect(await store.listPendingInvitations('bob')).toEqual([]);
      expect(await store.declineInvitation({ threadId: t, principalId: 'bob' })).toBe(false);
      expect(await codeOf(store.acceptInvitation({ threadId: t, principalId: 'bob' }))).toBe('not_found');
      expect((await store.listLiveGrantsOnThread(t)).map((g) => g.principalId)).toEqual(['alice']);
    });

    it('expires after 30 days', async () => {
      const { store, t } = await world();
      await invite(store, t, 'bob');
      advance(30 * 24 * 3600 * 1000 - 1);
      expect(await store.listPendingInvitations('bob')).toHaveLength(1);
      advance(1);
      expect(await store.listPendingInvitations('bob')).toEqual([]);
      expect(await codeOf(store.acceptInvitation({ threadId: t, principalId: 'bob' }))).toBe('not_found');
      expect(await store.declineInvitation({ threadId: t, principalId: 'bob' })).toBe(false);
      // Inviting again starts a new 30 days.
      await invite(store, t, 'bob');
      expect((await store.acceptInvitation({ threadId: t, principalId: 'bob' })).change).toBe('created');
    });

    it('is void once the inviter lost the grant that let them invite', async () => {
      const { store, t } = await world();
      await human(store, 'carol');
      await store.putGrant({ threadId: t, principalId: 'carol', role: 'member', by: 'alice', mayChangeRole: false });
      await invite(store, t, 'bob', 'carol');
      expect(await store.listPendingInvitations('bob')).toHaveLength(1);
      await store.revokeGrant({ threadId: t, principalId: 'carol', by: 'carol' });
      expect(await store.listPendingInvitations('bob')).toEqual([]);
      expect(await codeOf(store.acceptInvitation({ threadId: t, principalId: 'bob' }))).toBe('not_found');
      // An owner invitation needs its inviter to stay an owner.
      const t2 = await thread(store, 'alice');
      await store.putGrant({ threadId: t2, principalId: 'carol', role: 'owner', by: 'alice', mayChangeRole: false });
      await invite(store, t2, 'bob', 'carol', 'owner');
      await store.revokeGrant({ threadId: t2, principalId: 'carol', by: 'alice' });
      await store.putGrant({ threadId: t2, principalId: 'carol', role: 'member', by: 'alice', mayChangeRole: false });
      expect(await codeOf(store.acceptInvitation({ threadId: t2, principalId: 'bob' }))).toBe('not_found');
      expect((await store.listLiveGrantsOnThread(t2)).map((g) => g.principalId)).toEqual(['alice', 'carol']);
    });

    it('keeps one invitation per thread: another participant cannot swap it, its own inviter renews it', async () => {
      const { store, t } = await world();
      await human(store, 'carol');
      await store.putGrant({ threadId: t, principalId: 'carol', role: 'owner', by: 'alice', mayChangeRole: false });
      await invite(store, t, 'bob', 'alice');
      const first = clock.toISOString();
      advance(1000);
      // Carol's add leaves alice's invitation as it is: neither its inviter, its role nor its age changes.
      await invite(store, t, 'bob', 'carol', 'owner');
      expect(await store.listPendingInvitations('bob')).toEqual([
        { threadId: t, title: 'plans', invitedBy: 'alice', role: 'member', createdAt: first },
      ]);
      advance(1000);
      await invite(store, t, 'bob', 'alice', 'owner');
      expect(await store.listPendingInvitations('bob')).toEqual([
        { threadId: t, title: 'plans', invitedBy: 'alice', role: 'owner', createdAt: clock.toISOString() },
      ]);
      // Once alice's is void (she left), someone else's add makes a new one.
      await store.revokeGrant({ threadId: t, principalId: 'alice', by: 'alice' });
      await invite(store, t, 'bob', 'carol');
      expect(await store.listPendingInvitations('bob')).toEqual([
        { threadId: t, title: 'plans', invitedBy: 'carol', role: 'member', createdAt: clock.toISOString() },
      ]);
    });

    it('answers unchanged when someone else added the invitee meanwhile', async () => {
      const { store, t } = await world();
      await invite(store, t, 'bob', 'alice');
      await store.putGrant({ threadId: t, principalId: 'bob', role: 'member', by: 'alice', mayChangeRole: false });
      expect(await store.listPendingInvitations('bob')).toEqual([]);
      const { grant, change } = await store.acceptInvitation({ threadId: t, principalId: 'bob' });
      expect(change).toBe('unchanged');
      expect(grant).toMatchObject({ role: 'member', grantedBy: 'alice' });
      expect(await codeOf(store.acceptInvitation({ threadId: t, principalId: 'bob' }))).toBe('not_found');
    });

    it('keeps at most 100 pending per person: the oldest drop first', async () => {
      const { store } = await world();
      const threads: string[] = [];
      for (let i = 0; i < 102; i += 1) {
        const t = await thread(store, 'alice', `t${i}`);
        threads.push(t);
        await invite(store, t, 'bob');
        advance(1);
      }
      const pending = await store.listPendingInvitations('bob');
      expect(pending).toHaveLength(100);
      expect(pending.map((p) => p.threadId)).toEqual(threads.slice(2));
      expect(await codeOf(store.acceptInvitation({ threadId: threads[0]!, principalId: 'bob' }))).toBe('not_found');
      // Renewing an old one makes it the newest: the next to drop is the one after it.
      await invite(store, threads[2]!, 'bob');
      const t = await thread(store, 'alice');
      await invite(store, t, 'bob');
      expect((await store.listPendingInvitations('bob')).map((p) => p.threadId)).toEqual([
        ...threads.slice(4),
        threads[2],
        t,
      ]);
    });
  });
}
