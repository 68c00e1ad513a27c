/**
 * Issue 28 §3 (finding 3): in an agentic thread shared by two people, a file one person's turn wrote is not run in
 * the other's turn before it was shown to them, and every run's environment holds only its own sender's credentials.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Script } from '@bubble/model-double';
import { afterEach, describe, expect, it } from 'vitest';
import type { DoubleMessage } from './support/discord-double.js';
import { ALICE, ALICE_TOKEN, BOB, BOB_TOKEN, requestToken, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const ALICE_GITHUB = 'github_pat_alice_0123456789abcdef';
const plant = `printf '#!/bin/sh\\necho "build.sh ran with a GH_TOKEN of \${#GH_TOKEN} characters" > ran.txt\\n' > build.sh && chmod +x build.sh && printf 'gh=%s tmp=%s\\n' "\${#GH_TOKEN}" "$TMPDIR" && env`;
const script: Script = [
  { match: { toolResult: true }, reply: [{ type: 'text', text: 'done' }], times: 'always' },
  {
    match: { text: 'take notes' },
    reply: [
      {
        type: 'tool_use',
        name: 'Bash',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell expansions, run by Bash in the sandbox
        input: { command: 'echo one > notes.txt && printf "gh=%s tmp=%s\\n" "${#GH_TOKEN}" "$TMPDIR"' },
      },
    ],
    times: 'always',
  },
  { match: { text: 'helpful script' }, reply: [{ type: 'tool_use', name: 'Bash', input: { command: plant } }] },
  {
    match: { text: 'run the build' },
    reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'sh build.sh; cat ran.txt' } }],
    times: 'always',
  },
  { reply: [{ type: 'text', text: 'ok' }], times: 'always' },
];

function toolOutput(harness: Harness, fromIndex: number): string {
  const request = harness
    .mainRequests()
    .slice(fromIndex)
    .find((r) => r.toolResults.length > 0);
  const body = request?.body as { messages: Array<{ content: unknown }> } | undefined;
  const results = (body?.messages ?? [])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((c: { type?: string }) => c.type === 'tool_result');
  return JSON.stringify(results.at(-1) ?? null);
}

const changesButton = (message: DoubleMessage, choice: 'run' | 'cancel') =>
  JSON.stringify(message.components).match(new RegExp(`bubble-changes:[0-9a-f]{24}:${choice}`))![0];

describe('a shared agentic workspace', () => {
  it("another person's new files are listed before a turn and run only after the sender's Run my turn", async () => {
    h = await startHarness({ script });
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(ALICE, ALICE_GITHUB, 'github');
    await h.link(BOB, BOB_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    const mode = h.discord.slashCommand({
      channelId: threadId,
      user: ALICE,
      name: 'mode',
      options: { mode: 'agentic' },
    });
    await h.discord.waitFor(() => mode.callbacks[0]);
    const workspace = join(h.config.claude.workspaceRoot, threadId);
    const asks = (after: string) => h!.botMessages(threadId, after).filter((m) => m.content.startsWith('📂'));

    // Alice's first agentic turn: an empty workspace, nothing to show; her own env has her GitHub token.
    let from = h.mainRequests().length;
    const notes = h.say(threadId, ALICE, 'take notes');
    expect(await h.settled(notes)).toBe('✅');
    expect(asks(notes.id)).toEqual([]);
    const aliceEnv = toolOutput(h, from);
    expect(aliceEnv).toContain(`gh=${ALICE_GITHUB.length} `);
    const aliceTmp = /tmp=(\S+?)\\n/.exec(aliceEnv)?.[1];

    // Bob's turn is shown Alice's notes.txt first (he never ran here); he runs it. His env has none of Alice's.
    from = h.mainRequests().length;
    const planted = h.say(threadId, BOB, 'a helpful script');
    const bobAsk = await h.discord.waitFor(() => asks(planted.id)[0], { label: "Bob's list of changes" });
    expect(bobAsk.content).toContain('`notes.txt` new +1 −0');
    expect(h.mainRequests()).toHaveLength(from);
    h.discord.clickButton({
      channelId: threadId,
      user: BOB,
      messageId: bobAsk.id,
      customId: changesButton(bobAsk, 'run'),
    });
    expect(await h.settled(planted)).toBe('✅');
    const bobEnv = toolOutput(h, from);
    expect(requestToken(h.mainRequests()[from]!)).toBe(BOB_TOKEN);
    expect(bobEnv).toContain('gh=0 ');
    expect(bobEnv).not.toContain(ALICE_GITHUB);
    expect(bobEnv).not.toContain(ALICE_TOKEN);
    expect(bobEnv).not.toContain('GH_TOKEN=');
    expect(bobEnv).not.toContain('GITHUB_TOKEN=');
    const bobTmp = /tmp=(\S+?)\\n/.exec(bobEnv)?.[1];
    expect(aliceTmp).toBeDefined();
    expect(bobTmp).toBeDefined();
    expect(bobTmp).not.toBe(aliceTmp);
    expect(existsSync(join(workspace, 'build.sh'))).toBe(true);

    // Alice's next turn would run build.sh: it is listed first, and nothing runs before her answer.
    from = h.mainRequests().length;
    const build = h.say(threadId, ALICE, 'run the build');
    const ask = await h.discord.waitFor(() => asks(build.id)[0], { label: "Alice's list of changes" });
    expect(ask.content).toContain('<@2001>');
    expect(ask.content).toContain('`build.sh` new +2 −0 (executable)');
    expect(ask.content).not.toContain('notes.txt');
    expect(JSON.stringify(ask.components)).toContain('Run my turn');
    expect(JSON.stringify(ask.components)).toContain('Cancel');
    // Bob cannot answer for her.
    const bobClick = h.discord.clickButton({
      channelId: threadId,
      user: BOB,
      messageId: ask.id,
      customId: changesButton(ask, 'run'),
    });
    expect((await h.discord.waitFor(() => bobClick.callbacks[0])).data.content).toContain('Only <@2001>');
    expect(h.mainRequests()).toHaveLength(from);
    // She cancels: the turn does not run, build.sh did not run.
    h.discord.clickButton({
      channelId: threadId,
      user: ALICE,
      messageId: ask.id,
      customId: changesButton(ask, 'cancel'),
    });
    expect(await h.settled(build)).toBe('⚠️');
    expect(h.replyText(threadId, build.id)).toContain('Cancelled: your turn did not run.');
    expect(h.discord.message(ask.id)!.content).toContain('Cancelled by <@2001>');
    expect(h.mainRequests()).toHaveLength(from);
    expect(existsSync(join(workspace, 'ran.txt'))).toBe(false);

    // Asked again (still unseen); this time she runs it, on her own token.
    const again = h.say(threadId, ALICE, 'run the build');
    const second = await h.discord.waitFor(() => asks(again.id)[0], { label: 'the second list' });
    expect(second.content).toContain('`build.sh` new');
    h.discord.clickButton({
      channelId: threadId,
      user: ALICE,
      messageId: second.id,
      customId: changesButton(second, 'run'),
    });
    expect(await h.settled(again)).toBe('✅');
    expect(requestToken(h.mainRequests()[from]!)).toBe(ALICE_TOKEN);
    expect(readFileSync(join(workspace, 'ran.txt'), 'utf8')).toContain(`${ALICE_GITHUB.length} characters`);

    // Her own turn's files are hers: the next turn asks nothing.
    const quiet = h.say(threadId, ALICE, 'take notes');
    expect(await h.settled(quiet)).toBe('✅');
    expect(asks(quiet.id)).toEqual([]);
  }, 120_000);
});
