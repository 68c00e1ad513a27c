/**
 * Where the bot listens and how Discord threads map to Claude sessions, end to
 * end: real discord.js against the Discord double, the real CLI against the
 * model double.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ALICE,
  ALICE_TOKEN,
  BOB,
  BOB_TOKEN,
  CHANNEL_ID,
  OTHER_BOT,
  requestToken,
  said,
  startHarness,
  type Harness,
} from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function sessionRow(
  harness: Harness,
  threadId: string,
): { session_id: string | null; cwd: string; mode: string; created_by: string } | undefined {
  const db = new Database(harness.config.store.path, { readonly: true });
  try {
    return db
      .prepare('SELECT session_id, cwd, mode, created_by FROM thread_sessions WHERE thread_id = ?')
      .get(threadId) as never;
  } finally {
    db.close();
  }
}

describe('threads and sessions', () => {
  it('a mention starts a thread from the message; later messages there continue the same session without a mention', async () => {
    h = await startHarness({
      script: [
        {
          match: { text: 'first question' },
          reply: [
            { type: 'text', text: 'First answer, streamed in several words so the reply grows by edits.', delayMs: 40 },
          ],
        },
        { match: { text: 'second question' }, reply: [{ type: 'text', text: 'Second answer.' }] },
      ],
    });
    expect(await h.link(ALICE, ALICE_TOKEN)).toContain('Linked');
    const { message, threadId } = await h.mention(ALICE, 'first question');
    const thread = h.discord.channel(threadId)!;
    expect(thread.parentId).toBe(CHANNEL_ID);
    expect(thread.fromMessageId).toBe(message.id);
    expect(await h.settled(message)).toBe('✅');
    expect(h.discord.reactions(message.id)[0]).toBe('👀');
    const reply = h.botMessages(threadId);
    expect(reply.map((m) => m.content).join('')).toBe(
      'First answer, streamed in several words so the reply grows by edits.',
    );
    // It grew by edits: the message showed shorter text before the last.
    expect(reply[0]!.edits.length).toBeGreaterThan(1);
    expect(reply[0]!.edits[0]!.length).toBeLessThan(reply[0]!.content.length);
    expect(h.discord.typing(threadId).length).toBeGreaterThan(0);

    const row = sessionRow(h, threadId)!;
    expect(row.cwd).toBe(join(h.config.claude.workspaceRoot, threadId));
    expect(row.mode).toBe('chat');
    expect(row.created_by).toBe(ALICE.id);
    expect(row.session_id).toMatch(/^[0-9a-f-]{36}$/);
    // The harness keeps everything under the system temp folder: the bot says that loses every thread's memory.
    expect(h.logLines.filter((l) => String(l.msg).includes('is on a temporary filesystem')).map((l) => l.path)).toEqual(
      [h.config.claude.configDir, h.config.store.path],
    );

    const follow = h.say(threadId, ALICE, 'second question');
    expect(await h.settled(follow)).toBe('✅');
    expect(h.replyText(threadId, follow.id)).toBe('Second answer.');
    const [first, second] = h.mainRequests();
    expect(second!.sessionId).toBe(first!.sessionId);
    expect(second!.sessionId).toBe(row.session_id);
    // The history went with it, the sender named.
    expect(JSON.stringify(second!.body)).toContain(JSON.stringify(said(ALICE, 'first question')).slice(1, -1));
    expect(second!.lastUserText).toBe(said(ALICE, 'second question'));
  });

  it("two users in one thread share the session; each turn runs on its sender's own token", async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'ok' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello from alice');
    await h.settled(message);
    const fromBob = h.say(threadId, BOB, 'hello from bob');
    await h.settled(fromBob);
    const again = h.say(threadId, ALICE, 'alice again');
    await h.settled(again);
    const requests = h.mainRequests();
    expect(requests.map((r) => r.lastUserText)).toEqual([
      said(ALICE, 'hello from alice'),
      said(BOB, 'hello from bob'),
      said(ALICE, 'alice again'),
    ]);
    expect(requests.map(requestToken)).toEqual([ALICE_TOKEN, BOB_TOKEN, ALICE_TOKEN]);
    expect(new Set(requests.map((r) => r.sessionId)).size).toBe(1);
  });

  it('resumes by the stored session id after a restart', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'remembered' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'remember the word KUMQUAT');
    await h.settled(message);
    const stored = sessionRow(h, threadId)!.session_id;
    await h.restart();
    const next = h.say(threadId, ALICE, 'what was the word?');
    expect(await h.settled(next)).toBe('✅');
    const last = h.mainRequests().at(-1)!;
    expect(last.sessionId).toBe(stored);
    expect(JSON.stringify(last.body)).toContain('KUMQUAT');
    expect(sessionRow(h, threadId)!.session_id).toBe(stored);
  });

  it('a vanished session is replaced once: a new session and one retry', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'fresh start' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    const lost = sessionRow(h, threadId)!.session_id!;
    // Someone lost the CLI's home: every transcript is gone.
    await rm(join(h.config.claude.configDir, 'projects'), { recursive: true, force: true });
    const next = h.say(threadId, ALICE, 'are you there?');
    expect(await h.settled(next)).toBe('✅');
    expect(h.replyText(threadId, next.id)).toBe('fresh start');
    const renewed = sessionRow(h, threadId)!.session_id!;
    expect(renewed).not.toBe(lost);
    expect(h.mainRequests().at(-1)!.sessionId).toBe(renewed);
    expect(h.logLines.some((l) => l.msg === 'the stored Claude session is gone; starting a new one')).toBe(true);
  });

  it('ignores its own messages, other bots, and threads it did not start', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'ok' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    const before = h.mainRequests().length;
    const fromBot = h.discord.postMessage({ channelId: threadId, author: OTHER_BOT, content: 'beep' });
    const plain = h.discord.postMessage({ channelId: CHANNEL_ID, author: ALICE, content: 'no mention here' });
    // A sentinel after them: once it is answered, the earlier ones were seen and skipped.
    const sentinel = h.say(threadId, ALICE, 'sentinel');
    await h.settled(sentinel);
    expect(h.mainRequests().length).toBe(before + 1);
    expect(h.discord.reactions(fromBot.id)).toEqual([]);
    expect(h.discord.reactions(plain.id)).toEqual([]);
    expect(h.discord.threads()).toHaveLength(1);
  });

  it('registers its slash commands in each configured guild, or globally without guildIds', async () => {
    h = await startHarness();
    const names = (list: unknown[]) => list.map((c) => (c as { name: string }).name).sort();
    const all = ['ask', 'link', 'link-github', 'mode', 'model', 'reset', 'unlink'];
    expect(names(h.discord.commands('456'))).toEqual(all);
    expect(h.discord.commands(null)).toEqual([]);
    await h.close();
    h = await startHarness({ config: (c) => delete c.discord.guildIds });
    expect(names(h.discord.commands(null))).toEqual(all);
    expect(h.discord.commands('456')).toEqual([]);
  });

  it('with discord.allowBots, other bots are answered too (never itself)', async () => {
    h = await startHarness({
      script: [{ reply: [{ type: 'text', text: 'hello bot' }], times: 'always' }],
      config: (c) => (c.discord.allowBots = true),
    });
    await h.link(OTHER_BOT, BOB_TOKEN);
    const { message } = await h.mention(OTHER_BOT, 'hi from a bot');
    expect(await h.settled(message)).toBe('✅');
    expect(h.mainRequests().map((r) => r.lastUserText)).toEqual([said(OTHER_BOT, 'hi from a bot')]);
  });
});
