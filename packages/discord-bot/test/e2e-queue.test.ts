/** One global run queue: positions shown to those waiting, the dashboard's list and its Abort. */
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, BOB, BOB_TOKEN, CAROL, said, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CAROL_TOKEN = `sk-ant-oat01-carol-${'c'.repeat(40)}`;

/** One run at a time; "slow one" streams for 1.5 s, anything else answers at once. */
function oneSlotWithASlowTurn(): Promise<Harness> {
  return startHarness({
    script: [
      { match: { text: 'slow one' }, reply: [{ type: 'text', text: 'slow answer done', delayMs: 1_500 }] },
      { reply: [{ type: 'text', text: 'quick answer' }], times: 'always' },
    ],
    config: (c) => (c.limits.maxConcurrentRuns = 1),
  });
}

describe('queue', () => {
  it('with maxConcurrentRuns 1, a second and third thread wait, see their place in line move, and are answered in order', async () => {
    h = await oneSlotWithASlowTurn();
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    await h.link(CAROL, CAROL_TOKEN);
    const a = await h.mention(ALICE, 'slow one');
    await h.discord.waitFor(() => h!.mainRequests().length === 1);
    const b = await h.mention(BOB, 'second');
    const c = await h.mention(CAROL, 'third');
    const bStatus = await h.discord.waitFor(() => h!.botMessages(b.threadId)[0], { label: "Bob's status" });
    const cStatus = await h.discord.waitFor(() => h!.botMessages(c.threadId)[0], { label: "Carol's status" });
    expect(bStatus.edits[0]).toContain('#1 in line');
    // Accepted (👀) while it still waits for its run.
    expect(h.discord.reactions(b.message.id)).toEqual(['👀']);
    expect(cStatus.edits[0]).toContain('#2 in line');
    expect(await h.settled(a.message)).toBe('✅');
    expect(await h.settled(b.message)).toBe('✅');
    expect(await h.settled(c.message)).toBe('✅');
    // Carol moved up to #1 while Bob ran, and the status became the answer.
    expect(h.discord.message(cStatus.id)!.edits.some((e) => e.includes('#1 in line'))).toBe(true);
    expect(h.discord.message(cStatus.id)!.content).toBe('quick answer');
    expect(h.mainRequests().map((r) => r.lastUserText)).toEqual([
      said(ALICE, 'slow one'),
      said(BOB, 'second'),
      said(CAROL, 'third'),
    ]);
  });

  it('the dashboard lists running and queued runs and aborts one', async () => {
    h = await startHarness({
      script: [
        {
          match: { text: 'slow one' },
          reply: [{ type: 'text', text: 'this is a very slow answer indeed', delayMs: 1_000 }],
        },
        { reply: [{ type: 'text', text: 'quick answer' }], times: 'always' },
      ],
      config: (c) => {
        c.limits.maxConcurrentRuns = 1;
        c.dashboard = { host: '127.0.0.1', port: 0, token: { env: 'BUBBLE_DISCORD_DASHBOARD_TOKEN' } };
      },
    });
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    const a = await h.mention(ALICE, 'slow one');
    await h.discord.waitFor(() => h!.mainRequests().length === 1);
    const b = await h.mention(BOB, 'second');
    await h.discord.waitFor(() => h!.botMessages(b.threadId)[0]);
    const url = h.bot.dashboardUrl!;
    expect((await fetch(`${url}/api/runs`)).status).toBe(401);
    const auth = { authorization: `Bearer ${h.env.BUBBLE_DISCORD_DASHBOARD_TOKEN}` };
    const list = (await (await fetch(`${url}/api/runs`, { headers: auth })).json()) as {
      runs: Array<{ id: string; threadId: string; state: string; position?: number; userId: string; mode: string }>;
    };
    const running = list.runs.find((r) => r.threadId === a.threadId)!;
    const queued = list.runs.find((r) => r.threadId === b.threadId)!;
    expect(running).toMatchObject({ state: 'running', userId: ALICE.id, mode: 'chat' });
    expect(queued).toMatchObject({ state: 'queued', position: 1, userId: BOB.id });
    const aborted = await fetch(`${url}/api/runs/${running.id}/abort`, { method: 'POST', headers: auth });
    expect(aborted.status).toBe(200);
    expect(await h.settled(a.message)).toBe('⚠️');
    expect(h.replyText(a.threadId)).toContain('Stopped from the dashboard');
    expect(await h.settled(b.message)).toBe('✅');
    expect((await fetch(`${url}/api/runs/${running.id}/abort`, { method: 'POST', headers: auth })).status).toBe(404);
  });

  it('deleting a thread stops its running reply and frees the slot', async () => {
    h = await startHarness({
      script: [
        { match: { text: 'very slow' }, reply: [{ type: 'text', text: 'word '.repeat(40), delayMs: 1_000 }] },
        { reply: [{ type: 'text', text: 'quick answer' }], times: 'always' },
      ],
      config: (c) => (c.limits.maxConcurrentRuns = 1),
    });
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    const a = await h.mention(ALICE, 'very slow');
    await h.discord.waitFor(() => h!.botMessages(a.threadId).length > 0, { label: 'the slow reply to start' });
    const b = await h.mention(BOB, 'second');
    const deletedAt = Date.now();
    h.discord.deleteThread(a.threadId);
    // The slow reply would take 40 s; with its thread gone the run ends and the slot goes to Bob.
    expect(await h.settled(a.message)).toBe('⚠️');
    expect(await h.settled(b.message)).toBe('✅');
    expect(Date.now() - deletedAt).toBeLessThan(15_000);
    expect(h.logLines.some((l) => l.msg === 'thread deleted; its runs stopped' && l.threadId === a.threadId)).toBe(
      true,
    );
  });

  it('/reset in a thread whose turn is still queued takes it out of the line; the running one goes on', async () => {
    h = await oneSlotWithASlowTurn();
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    const a = await h.mention(ALICE, 'slow one');
    await h.discord.waitFor(() => h!.mainRequests().length === 1);
    const b = await h.mention(BOB, 'second');
    await h.discord.waitFor(() => h!.botMessages(b.threadId)[0]?.content.includes('#1 in line'), {
      label: "Bob's place in line",
    });
    const reset = h.discord.slashCommand({ channelId: b.threadId, user: BOB, name: 'reset' });
    await h.discord.waitFor(() => reset.callbacks[0]);
    expect(await h.settled(b.message)).toBe('⚠️');
    expect(h.replyText(b.threadId)).toContain('Stopped by /reset');
    expect(await h.settled(a.message)).toBe('✅');
    // Bob's turn never reached the model.
    expect(h.mainRequests().map((r) => r.lastUserText)).toEqual([said(ALICE, 'slow one')]);
  });
});
