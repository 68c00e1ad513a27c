import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, type TestBrowser, openSignInLink } from './support/browser.js';
import {
  blockTheInternet,
  screenshot,
  signInAtProvider,
  say,
  startOidcWorld,
  type OidcWorld,
} from './support/oidc-world.js';

/**
 * Bringing people in and telling them apart (issue 15), in Debian's Chromium against the real
 * server and a real OpenID provider: an owner copies an invite link, a second person opens it in
 * a fresh browser, signs in on the provider's own pages and lands in the thread; owners revoke
 * invites; spent and expired links say so; people revoke their own tokens on "Sessions and
 * tokens"; bots carry a badge and shared names show ids.
 */
let world: OidcWorld;
let dana: TestBrowser;
let threadId: string;
let firstLink: string;
const extra: TestBrowser[] = [];

async function browserFor(name: string): Promise<TestBrowser> {
  const b = await openBrowser(`people-${name}`);
  await blockTheInternet(b.page, [world.url, world.provider.issuer]);
  extra.push(b);
  return b;
}

/** The page's own access token: the API accepts it from anywhere, as the protocol says. */
async function pageClient(b: TestBrowser): Promise<BubbleClient> {
  const token = await b.page.evaluate(
    () => JSON.parse(sessionStorage.getItem('bubble.oidc.session') ?? '{}').accessToken as string,
  );
  return new BubbleClient({ url: world.url, token });
}

beforeAll(async () => {
  world = await startOidcWorld({
    dana: { name: 'Dana Scully', preferred_username: 'dana', email: 'dana@example.com' },
    erin: { name: 'Erin Reyes', preferred_username: 'erin', email: 'erin@example.com' },
  });
  dana = await openBrowser('people-dana');
  await blockTheInternet(dana.page, [world.url, world.provider.issuer]);
  await dana.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.url });
}, 60_000);

afterAll(async () => {
  for (const b of extra) await b.close();
  await dana?.close();
  await world?.stop();
});

describe('invite links', () => {
  it('an owner copies an invite link from the People panel', async () => {
    const { page, step } = dana;
    await step('open', () => page.goto(world.url));
    await step('sign in', () => page.getByRole('button', { name: /^Sign in with 127\./ }).click());
    await step('provider', () => signInAtProvider(page, world.provider, 'dana'));
    await step('signed in', () => page.getByTestId('me').filter({ hasText: 'Dana Scully' }).waitFor());
    await page.getByLabel('New thread').fill('Project X');
    await step('create', () => page.getByRole('button', { name: 'Create' }).click());
    await step('opened', () => page.getByRole('heading', { name: 'Project X' }).waitFor());
    threadId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('Welcome to Project X');
    await composer.press('Enter');
    await step('said', () => page.locator('article.run.mine', { hasText: 'Welcome to Project X' }).waitFor());
    await step('people', () => page.getByRole('button', { name: /^People/ }).click());
    await step('copy link', () => page.getByRole('button', { name: 'Copy invite link' }).click());
    await step('copied', () =>
      page.getByText(/^Invite link copied\. Whoever opens it joins as a member, once, for 7 days\.$/).waitFor(),
    );
    firstLink = await page.getByTestId('invite-link').inputValue();
    expect(firstLink).toMatch(new RegExp(`^${world.url}/invite#bubble_invite_[A-Za-z0-9_-]+$`));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(firstLink);
    await step('listed', () =>
      page.getByRole('list', { name: 'Open invites' }).getByRole('listitem').first().waitFor(),
    );
    expect(await page.getByRole('list', { name: 'Open invites' }).textContent()).toContain('member · 0/1 used');
    await screenshot(page, 'invite-1-owner-copied-link');
  });

  it('a second person opens it in a fresh browser, signs in through the provider, and lands in the thread in under a minute', async () => {
    const erin = await browserFor('erin');
    const { page, step } = erin;
    const started = Date.now();
    await step('open the link', () => page.goto(firstLink));
    await step('invited', () => page.getByRole('heading', { name: 'You are invited to a thread' }).waitFor());
    // The token left the address bar at once (it waits in the tab's storage for the sign-in).
    expect(page.url()).toBe(`${world.url}/invite`);
    await screenshot(page, 'invite-2-invitee-sign-in');
    await step('sign in', () => page.getByRole('button', { name: /^Sign in with 127\./ }).click());
    await step('provider', () => signInAtProvider(page, world.provider, 'erin', 'invite-3'));
    await step('in the thread', () => page.getByRole('heading', { name: 'Project X' }).waitFor());
    await step('sees the history', () => page.getByText('Welcome to Project X').waitFor());
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(60_000);
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(`/threads/${threadId}`);
    await step('can write', () => page.getByRole('textbox', { name: 'Message' }).fill('Hi, Erin here'));
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await step('said', () => page.locator('article.run.mine', { hasText: 'Hi, Erin here' }).waitFor());
    await screenshot(page, 'invite-4-invitee-in-thread');
    // The owner sees the newcomer arrive, added by the owner's invite.
    await dana.step('newcomer shown', () => dana.page.getByText('erin joined as member').waitFor());
    await dana.step('newcomer speaks', () => dana.page.getByText('Hi, Erin here').waitFor());
    console.log(`an invitee joined through the provider in ${(elapsed / 1000).toFixed(1)} s`);
  });

  it('a used-up link, a revoked one and an expired one each say so clearly', async () => {
    const { page, step } = dana;
    // The used link is gone from the open invites.
    await step('used link not listed', async () => {
      await page.reload();
      await page.getByRole('button', { name: /^People/ }).click();
      await page.getByRole('button', { name: 'Copy invite link' }).waitFor();
      await expect.poll(() => page.getByRole('list', { name: 'Open invites' }).count()).toBe(0);
    });
    // Another link, for five people, revoked by the owner.
    await step('options', () => page.getByText('Link options').click());
    await page.getByLabel('People who may use it').selectOption('5');
    await page.getByLabel('Works for').selectOption('86400');
    await step('second link', () => page.getByRole('button', { name: 'Copy invite link' }).click());
    await step('copied', () =>
      page.getByText('Invite link copied. Whoever opens it joins as a member, up to 5 people, for 1 day.').waitFor(),
    );
    const revokedLink = await page.getByTestId('invite-link').inputValue();
    const open = page.getByRole('list', { name: 'Open invites' });
    await step('listed', () => open.getByText(/member · 0\/5 used · ends in (24 hours|1 day|tomorrow)/).waitFor());
    await screenshot(page, 'invite-5-owner-open-invites');
    await step('revoke', () => open.getByRole('button', { name: /^Revoke invite inv_/ }).click());
    await step('revoked', () => page.getByText('Invite revoked: its link no longer works.').waitFor());
    await step('gone from the list', () => expect.poll(() => open.count()).toBe(0));

    // A third person, signed in with a local token, tries each dead link.
    const fran = await browserFor('fran');
    const franToken = await world.human('fran', 'Fran');
    await fran.step('sign in', () => openSignInLink(fran.page, `${world.url}/#token=${franToken}`));
    await fran.step('signed in', () => fran.page.getByTestId('me').filter({ hasText: 'Fran' }).waitFor());
    const danaApi = await pageClient(dana);
    const expired = await danaApi.createInvite(threadId, { expiresInSeconds: 1 });
    danaApi.close();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const expiredLink = `${world.url}/invite#${expired.token}`;
    for (const [what, link] of [
      ['used-up', firstLink],
      ['revoked', revokedLink],
      ['expired', expiredLink],
    ] as const) {
      await fran.step(`open the ${what} link`, () => fran.page.goto(link));
      await fran.step(`${what} explained`, () =>
        fran.page.getByRole('heading', { name: 'This invite link cannot be used' }).waitFor(),
      );
      expect(await fran.page.getByRole('alert').textContent()).toBe(
        'It has expired, has been used as many times as it allows, or was revoked. Ask the person who sent it for a new link.',
      );
      if (what === 'used-up') await screenshot(fran.page, 'invite-6-used-up-link');
    }
    // Fran joined nothing: the server says so, and so does her thread list once it has loaded.
    const franApi = new BubbleClient({ url: world.url, token: franToken });
    try {
      expect((await franApi.listThreads()).map((t) => t.threadId)).not.toContain(threadId);
    } finally {
      franApi.close();
    }
    await fran.step('no threads', () => fran.page.getByRole('link', { name: 'Go to your threads' }).click());
    await fran.step('home', () => fran.page.getByRole('heading', { name: 'Welcome, Fran' }).waitFor());
    // The list has loaded (not "Loading threads…"): only then does an absent thread mean anything.
    const yours = fran.page.getByRole('list', { name: 'Your threads' });
    await fran.step('thread list loaded', () => yours.waitFor({ state: 'attached' }));
    expect(await yours.getByRole('link', { name: 'Project X' }).count()).toBe(0);
  });

  it('after a failure that may pass, "Go to your threads" forgets the invite and leaves (a reload does not bring it back)', async () => {
    const gil = await browserFor('gil');
    const gilToken = await world.human('gil', 'Gil');
    const danaApi = await pageClient(dana);
    const invite = await danaApi.createInvite(threadId, {});
    danaApi.close();
    const { page, step } = gil;
    await step('sign in', () => openSignInLink(page, `${world.url}/#token=${gilToken}`));
    await step('signed in', () => page.getByTestId('me').filter({ hasText: 'Gil' }).waitFor());
    // The server has a bad moment: joining answers 503.
    await page.route(`${world.url}/v1/invites/accept`, (route) =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ error: { code: 'unavailable', message: 'try again later' } }),
      }),
    );
    await step('open the link', () => page.goto(`${world.url}/invite#${invite.token}`));
    await step('failed for now', () => page.getByRole('button', { name: 'Try again' }).waitFor());
    await screenshot(page, 'invite-7-retryable-failure');
    await step('leave', () => page.getByRole('link', { name: 'Go to your threads' }).click());
    await step('home', () => page.getByRole('heading', { name: 'Welcome, Gil' }).waitFor());
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.evaluate(() => sessionStorage.getItem('bubble.invite'))).toBeNull();
    await step('reload', () => page.reload());
    await step('still home', () => page.getByRole('heading', { name: 'Welcome, Gil' }).waitFor());
    expect(await page.getByRole('heading', { name: 'This invite link cannot be used' }).count()).toBe(0);
    await page.unroute(`${world.url}/v1/invites/accept`);
  });
});

describe('a sign-in link opened in a tab that is already signed in', () => {
  it('asks before switching; Not now changes nothing, Sign in signs in with the link', async () => {
    const b = await browserFor('switch');
    const mine = await world.human('hal', 'Hal');
    const theirs = await world.human('mallory', 'Mallory');
    const { page, step } = b;
    await step('sign in', () => openSignInLink(page, `${world.url}/#token=${mine}`));
    await step('signed in', () => page.getByTestId('me').filter({ hasText: 'Hal' }).waitFor());
    // Someone sends Hal a sign-in link of their own.
    // (From another page, as a link is followed: a same-page hash change alone loads nothing.)
    await step('elsewhere', () => page.goto('about:blank'));
    await step('open their link', () => page.goto(`${world.url}/#token=${theirs}`));
    await step('asked', () => page.getByRole('heading', { name: 'Sign in as Mallory (mallory)?' }).waitFor());
    expect(page.url()).not.toContain(theirs);
    expect(await page.getByText('This tab is already signed in with another token').count()).toBe(1);
    expect(await page.evaluate(() => sessionStorage.getItem('bubble.token'))).toBe(mine);
    await screenshot(page, 'switch-1-asked');
    await step('stay', () => page.getByRole('button', { name: 'Not now' }).click());
    await step('still Hal', () => page.getByTestId('me').filter({ hasText: 'Hal' }).waitFor());
    expect(await page.evaluate(() => sessionStorage.getItem('bubble.token'))).toBe(mine);
    // A link Hal means to use: switching is one click.
    await step('elsewhere again', () => page.goto('about:blank'));
    await step('open it again', () => page.goto(`${world.url}/#token=${theirs}`));
    await step('switch', () => page.getByRole('button', { name: 'Sign in', exact: true }).click());
    await step('now Mallory', () => page.getByTestId('me').filter({ hasText: 'Mallory' }).waitFor());
    expect(await page.evaluate(() => sessionStorage.getItem('bubble.token'))).toBe(theirs);
  });

  it('asks over a provider sign-in too', async () => {
    const { page, step } = dana;
    const other = await world.human('nora', 'Nora');
    await step('open a link', () => page.goto(`${world.url}/#token=${other}`));
    await step('asked', () => page.getByRole('heading', { name: 'Sign in as Nora (nora)?' }).waitFor());
    expect(await page.getByText('This tab is already signed in with your identity provider').count()).toBe(1);
    await step('stay', () => page.getByRole('button', { name: 'Not now' }).click());
    await step('still Dana', () => page.getByTestId('me').filter({ hasText: 'Dana Scully' }).waitFor());
  });
});

describe('who is who', () => {
  it('badges bots everywhere and shows ids where two participants share a name', async () => {
    const { page, step } = dana;
    const danaApi = await pageClient(dana);
    try {
      // A bot of Dana's, and a second person the operator also named "Dana Scully".
      const { token: botToken } = await danaApi.createBot({ principalId: 'helper', displayName: 'Helper' });
      await danaApi.createBot({ principalId: 'scout', displayName: 'Scout' });
      await danaApi.addParticipant(threadId, 'helper');
      const twinToken = await world.human('dana-2', 'Dana Scully');
      await danaApi.addParticipant(threadId, 'dana-2');
      const bot = new BubbleClient({ url: world.url, token: botToken.token });
      const twin = new BubbleClient({ url: world.url, token: twinToken });
      // A stranger to Dana: the twin accepts her invitation (protocol.md, Consent).
      await twin.acceptInvitation(threadId);
      await say(bot, threadId, 'I am a bot, and I say so.');
      await say(twin, threadId, 'I am the other Dana Scully.');
      // Places that used to show a name as plain text: who asked to stop a run, who wrote an artifact.
      const runId = `run-test-stopped-${Math.random().toString(36).slice(2)}`;
      await bot.appendEvents(threadId, [
        { type: 'run_started', data: { runId } },
        { type: 'run_interrupt_requested', data: { runId, reason: 'stop' } },
      ]);
      await bot.putArtifact(threadId, 'notes.md', { content: '# Notes', mediaType: 'text/markdown' });
      bot.close();
      twin.close();
    } finally {
      danaApi.close();
    }
    await step('thread', () => page.goto(`${world.url}/threads/${encodeURIComponent(threadId)}`));
    const botMessage = page.locator('article.run', { hasText: 'I am a bot, and I say so.' });
    await step('bot badge in the message', () => botMessage.locator('header .bot-badge').waitFor());
    expect(await botMessage.locator('.avatar-bot').count()).toBe(1);
    await step('bot badge on who asked to stop', () =>
      page.locator('article.run p.meta', { hasText: 'asked to stop this run' }).locator('.bot-badge').waitFor(),
    );
    const twinMessage = page.locator('article.run', { hasText: 'I am the other Dana Scully.' });
    await step('twin id shown', () => twinMessage.locator('header .principal-id', { hasText: 'dana-2' }).waitFor());
    const own = page.locator('article.run.mine', { hasText: 'Welcome to Project X' });
    await step('own id shown too', () => own.locator('header .principal-id', { hasText: /^dana$/ }).waitFor());
    expect(await twinMessage.getAttribute('aria-label')).toBe('Message from Dana Scully (dana-2)');
    // Erin's name is hers alone: no id beside it, and no badge.
    const erinMessage = page.locator('article.run', { hasText: 'Hi, Erin here' });
    expect(await erinMessage.locator('header .principal-id').count()).toBe(0);
    expect(await erinMessage.locator('header .bot-badge').count()).toBe(0);

    await step('people', () => page.getByRole('button', { name: /^People/ }).click());
    const people = page.getByRole('complementary', { name: 'People on this thread' }).locator('ul.people');
    await step('bot badged in People', () => people.locator('li[data-principal-id="helper"] .bot-badge').waitFor());
    expect(await people.locator('li[data-principal-id="dana-2"] .principal-id').textContent()).toBe('dana-2');
    expect(await people.locator('li .bot-badge').count()).toBe(1);
    // Search results badge bots too.
    await page.getByLabel('Invite a person or bot').fill('scout');
    const found = page.getByRole('list', { name: 'Search results' }).locator('[data-principal-id="scout"]');
    await step('bot badged in search', () => found.locator('.bot-badge').waitFor());
    await screenshot(page, 'who-1-badges-and-ids');
    await step('artifacts', () => page.getByRole('button', { name: 'Artifacts' }).click());
    const artifacts = page.getByRole('complementary', { name: 'Artifacts' });
    await step('bot badge on the artifact writer', () =>
      artifacts.locator('li', { hasText: 'notes.md' }).locator('.bot-badge').waitFor(),
    );
    expect(await artifacts.locator('li', { hasText: 'notes.md' }).textContent()).not.toContain('· helper');
    await screenshot(page, 'who-3-artifact-by-bot');
    await step('people again', () => page.getByRole('button', { name: /^People/ }).click());
    // At a phone's width nothing is wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await step('phone', () => page.locator('article.run', { hasText: 'I am the other Dana Scully.' }).waitFor());
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(
        0,
      );
      await screenshot(page, 'who-2-phone');
    } finally {
      await page.setViewportSize({ width: 1200, height: 800 });
    }
  });
});

describe('Sessions and tokens', () => {
  it('lists your tokens with this browser marked, mints one shown once, and revokes them; an open session elsewhere is signed out at once', async () => {
    const me = await browserFor('tokens');
    const you = await world.human('you', 'You');
    const { page, step } = me;
    await me.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.url });
    await step('sign in', () => openSignInLink(page, `${world.url}/#token=${you}`));
    await step('signed in', () => page.getByTestId('me').filter({ hasText: 'You' }).waitFor());
    await step('tokens page', () => page.getByRole('link', { name: 'Sessions and tokens' }).click());
    await step('heading', () => page.getByRole('heading', { name: 'Your sessions and tokens' }).waitFor());
    const list = page.getByRole('list', { name: 'Your tokens' });
    await step('this browser', () => list.getByText('this browser').waitFor());
    expect(await list.getByRole('listitem').count()).toBe(1);

    await step('mint', () => page.getByRole('button', { name: 'Make a new token' }).click());
    const fresh = await step('shown once', async () => {
      await page.getByTestId('fresh-own-token').waitFor();
      return page.getByTestId('fresh-own-token').inputValue();
    });
    expect(fresh).toMatch(/^bubble_user_/);
    await step('copy', () =>
      page.getByRole('group', { name: 'Your new token' }).getByRole('button', { name: 'Copy' }).click(),
    );
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(fresh);
    await step('two tokens', () => expect.poll(() => list.getByRole('listitem').count()).toBe(2));
    await screenshot(page, 'tokens-1-minted');
    await step('saved', () => page.getByRole('button', { name: 'I have saved it' }).click());
    expect(await page.content()).not.toContain(fresh);

    // The new token signs another browser in; revoking it here signs that one out at once (4003).
    const other = await browserFor('tokens-other');
    await other.step('sign in', () => openSignInLink(other.page, `${world.url}/#token=${fresh}`));
    await other.step('live', () => other.page.getByTestId('live-state').filter({ hasText: 'Live' }).waitFor());
    const otherRow = list.getByRole('listitem').filter({ hasNotText: 'this browser' });
    await step('revoke the other', () => otherRow.getByRole('button', { name: /^Revoke tok_/ }).click());
    await step('revoked', () => page.getByText(/^Revoked tok_\S+\. Anything that used it is signed out\.$/).waitFor());
    await other.step('other signed out', () =>
      other.page.getByText('This browser was signed out: its sign-in was revoked or has ended.').waitFor(),
    );
    await screenshot(other.page, 'tokens-2-other-browser-signed-out');
    expect(await list.getByRole('listitem').count()).toBe(1);

    // Revoking this browser's own token signs it out.
    page.once('dialog', (dialog) => void dialog.accept());
    await step('revoke this browser', () => list.getByRole('button', { name: /\(this browser\)$/ }).click());
    await step('signed out', () =>
      page.getByText('You revoked the token this browser was signed in with, so it is signed out.').waitFor(),
    );
    await screenshot(page, 'tokens-3-this-browser-signed-out');
    const check = new BubbleClient({ url: world.url, token: you, retry: false });
    await expect(check.whoami()).rejects.toMatchObject({ code: 'unauthorized' });
    check.close();
  });

  it('says an identity-provider sign-in is not a listed token', async () => {
    const { page, step } = dana;
    await step('tokens page', () => page.getByRole('link', { name: 'Sessions and tokens' }).click());
    await step('explained', () =>
      page
        .getByText(/^This browser is signed in through 127\.0\.0\.1:\d+; that sign-in is renewed by itself/)
        .waitFor(),
    );
    await screenshot(page, 'tokens-4-oidc-session');
  });
});
