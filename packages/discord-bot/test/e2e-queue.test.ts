/** One global run queue: positions shown to those waiting, the dashboard's list and its Abort. */
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, BOB, BOB_TOKEN, CAROL, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const CAROL_TOKEN = `sk-ant-oat01-carol-${'c'.repeat(40)}`;

describe('queue', () => {
  it('with maxConcurrentRuns 1, a second and third thread wait, see their place in line move, and are answered in order', async () => {
    h = await startHarness({
      script: [
        { match: { text: 'slow one' }, reply: [{ type: 'text', text: 'slow answer done', delayMs: 1_500 }] },
        { reply: [{ type: 'text', text: 'quick answer' }], times: 'always' },
      ],
      config: (c) => (c.limits.maxConcurrentRuns = 1),
    });
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
    expect(h.mainRequests().map((r) => r.lastUserText)).toEqual(['Alice: slow one', 'Bob: second', 'Carol: third']);
  });

  it('the dashboard lists running and queued runs and aborts one', async () => {
    h = await startHarness({
      script: [
        { match: { text: 'slow one' }, reply: [{ type: 'text', text: 'this is a very slow answer indeed', delayMs: 1_000 }] },
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
    const list = (await (await fetch(`${url}/api/runs`, { headers: auth })).json()) as { runs: Array<{ id: string; threadId: string; state: string; position?: number; userId: string; mode: string }> };
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
});
