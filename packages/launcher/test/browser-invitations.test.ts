import type { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, openSignInLink, type TestBrowser } from './support/browser.js';
import { say, shot, startWebWorld, type WebWorld } from './support/web-world.js';

/**
 * Consent in the web UI (issue 28 item 4, protocol.md "Consent"), in Debian's Chromium against
 * the real server: a stranger's add is an invitation the person sees in an "Invitations" list,
 * and nothing of the thread reaches them until they accept; Decline drops it.
 */
let world: WebWorld;
let browser: TestBrowser;
let alice: { token: string; client: BubbleClient };
let mallory: { token: string; client: BubbleClient };

beforeAll(async () => {
  world = await startWebWorld();
  alice = await world.human('alice', 'Alice');
  mallory = await world.human('mallory', 'Mallory');
  browser = await openBrowser('invitations');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

describe('invitations', () => {
  it('lists a stranger’s invitations with Accept and Decline; only Accept puts the person on the thread', async () => {
    const { page, step } = browser;
    const { thread: wanted } = await mallory.client.createThread({ title: 'Budget review' });
    await say(mallory.client, wanted.threadId, 'Numbers for Q3 are in.');
    const { thread: pushed } = await mallory.client.createThread({ title: 'Definitely not spam' });
    expect((await mallory.client.addParticipant(wanted.threadId, 'alice')).status).toBe('pending');
    expect((await mallory.client.addParticipant(pushed.threadId, 'alice')).status).toBe('pending');

    await step('sign in', () => openSignInLink(page, world.link(alice.token)));
    const list = page.getByRole('list', { name: 'Invitations' });
    await step('invitations shown', () => list.getByText('Budget review').waitFor());
    expect(await list.locator('li').count()).toBe(2);
    expect(await list.locator(`li[data-thread-id="${wanted.threadId}"]`).textContent()).toContain(
      'from mallory, as member',
    );
    // Pending is not joined: neither thread is in alice's list, and the server agrees.
    const threads = page.getByRole('list', { name: 'Your threads' });
    await step('threads loaded', () => threads.waitFor({ state: 'attached' }));
    expect(await threads.getByText('Budget review').count()).toBe(0);
    expect((await alice.client.listThreads()).map((t) => t.threadId)).toEqual([]);
    await shot(page, 'invitations-list');

    await step('decline', () =>
      page.getByRole('button', { name: 'Decline the invitation to Definitely not spam from mallory' }).click(),
    );
    await step('declined', () => page.getByText('You declined the invitation to Definitely not spam.').waitFor());
    expect(await list.locator('li').count()).toBe(1);

    await step('accept', () =>
      page.getByRole('button', { name: 'Accept the invitation to Budget review from mallory' }).click(),
    );
    await step('thread opened', () => page.getByRole('heading', { name: 'Budget review' }).waitFor());
    await step('history shown', () => page.getByText('Numbers for Q3 are in.').waitFor());
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(`/threads/${wanted.threadId}`);
    await step('in the list', () => threads.getByText('Budget review').waitFor());
    expect(await page.getByRole('list', { name: 'Invitations' }).count()).toBe(0);
    expect((await alice.client.listThreads()).map((t) => t.threadId)).toEqual([wanted.threadId]);
    expect(await alice.client.listInvitations()).toEqual([]);
    // The grant is the inviter's, as protocol.md says; the declined thread stays shut.
    const grant = (await alice.client.listParticipants(wanted.threadId)).find((g) => g.principalId === 'alice');
    expect(grant).toMatchObject({ role: 'member', grantedBy: 'mallory' });
    await expect(alice.client.readEvents(pushed.threadId, { after: 0 })).rejects.toMatchObject({ status: 403 });
    await shot(page, 'invitation-accepted');
  });
});
