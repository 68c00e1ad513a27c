/** Modes per thread, /ask, /model, /reset, and approvals by button. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Script } from '@bubble/model-double';
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, BOB, BOB_TOKEN, CHANNEL_ID, said, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Body = { tools?: Array<{ name: string }>; system?: Array<{ text: string }> | string; model?: string };
const toolNames = (body: unknown) => ((body as Body).tools ?? []).map((t) => t.name).sort();
const systemText = (body: unknown) => {
  const system = (body as Body).system;
  return typeof system === 'string' ? system : (system ?? []).map((b) => b.text).join('\n');
};

async function command(
  harness: Harness,
  channelId: string,
  user: typeof ALICE,
  name: string,
  options?: Record<string, string>,
) {
  const interaction = harness.discord.slashCommand({
    channelId,
    user,
    name,
    ...(options === undefined ? {} : { options }),
  });
  const answer = await harness.discord.waitFor(() => interaction.callbacks[0], { label: `the answer to /${name}` });
  return { interaction, answer: answer as { type: number; data: { content?: string; flags?: number } } };
}

describe('modes', () => {
  it("chat offers only WebSearch and WebFetch with a custom prompt; agentic adds the file and shell tools on Claude Code's prompt", async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'ok' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'chat turn');
    await h.settled(message);
    const chat = h.mainRequests()[0]!;
    expect(toolNames(chat.body)).toEqual(['WebFetch', 'WebSearch']);
    expect(systemText(chat.body)).toContain('helpful assistant in a Discord server');
    expect(systemText(chat.body)).not.toContain('Claude Code');

    const { answer } = await command(h, threadId, ALICE, 'mode', { mode: 'agentic' });
    expect(answer.data.content).toContain('agentic');
    const next = h.say(threadId, ALICE, 'agentic turn');
    expect(await h.settled(next)).toBe('✅');
    const agentic = h.mainRequests().at(-1)!;
    expect(toolNames(agentic.body)).toEqual(['Bash', 'Edit', 'Glob', 'Grep', 'Read', 'WebFetch', 'WebSearch', 'Write']);
    expect(systemText(agentic.body)).toContain('Your workspace is shared by everyone in this thread.');
    expect(agentic.sessionId).toBe(chat.sessionId);
  });

  it("agentic tools run in the sandbox, inside the thread's workspace", async () => {
    h = await startHarness({
      script: [
        {
          match: { text: 'make a file' },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: { command: 'echo hi > made.txt && (echo x > /made-outside.txt 2>&1 || echo WRITE-REFUSED)' },
            },
          ],
        },
        { match: { toolResult: true }, reply: [{ type: 'text', text: 'made it' }] },
        { reply: [{ type: 'text', text: 'ok' }], times: 'always' },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    await command(h, threadId, ALICE, 'mode', { mode: 'agentic' });
    const ask = h.say(threadId, ALICE, 'make a file');
    expect(await h.settled(ask)).toBe('✅');
    expect(existsSync(join(h.config.claude.workspaceRoot, threadId, 'made.txt'))).toBe(true);
    expect(existsSync('/made-outside.txt')).toBe(false);
    expect(JSON.stringify(h.mainRequests().at(-1)!.body)).toContain('WRITE-REFUSED');
  });

  it('/ask answers once, only to the asker, with no session and no thread', async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'forty-two' }] }] });
    await h.link(ALICE, ALICE_TOKEN);
    const interaction = h.discord.slashCommand({
      channelId: CHANNEL_ID,
      user: ALICE,
      name: 'ask',
      options: { prompt: 'the answer?' },
    });
    const original = await h.discord.waitFor(
      () => interaction.original?.content === 'forty-two' && interaction.original,
      { label: 'the /ask answer', timeoutMs: 30_000 },
    );
    expect(interaction.callbacks[0]!.type).toBe(5);
    expect(interaction.callbacks[0]!.data.flags & 64).toBe(64);
    expect(original.content).toBe('forty-two');
    expect(h.discord.threads()).toHaveLength(0);
    const request = h.mainRequests()[0]!;
    expect(request.lastUserText).toBe(said(ALICE, 'the answer?'));
    expect(toolNames(request.body)).toEqual(['WebFetch', 'WebSearch']);
  });

  it("/model changes the model of one thread; /mode, /model and /reset are for the thread's starter", async () => {
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'ok' }], times: 'always' }] });
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    expect(h.mainRequests()[0]!.model).toBe('claude-sonnet-4-5');
    const refused = await command(h, threadId, BOB, 'model', { model: 'claude-opus-4-5' });
    expect(refused.answer.data.content).toContain('Only <@2001>');
    expect(refused.answer.data.flags! & 64).toBe(64);
    await command(h, threadId, ALICE, 'model', { model: 'claude-haiku-4-5' });
    const next = h.say(threadId, BOB, 'which model?');
    await h.settled(next);
    expect(h.mainRequests().at(-1)!.model).toBe('claude-haiku-4-5');
    const outside = await command(h, CHANNEL_ID, ALICE, 'mode', { mode: 'agentic' });
    expect(outside.answer.data.content).toContain('in a thread I started');
  });

  it('/reset stops the running reply and drops the session; the next message starts a new one', async () => {
    h = await startHarness({
      script: [
        { match: { text: 'slow' }, reply: [{ type: 'text', text: 'this takes a long time to say', delayMs: 800 }] },
        { reply: [{ type: 'text', text: 'ok' }], times: 'always' },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'hello');
    await h.settled(message);
    const firstSession = h.mainRequests()[0]!.sessionId;
    const slow = h.say(threadId, ALICE, 'slow');
    await h.discord.waitFor(() => h!.mainRequests().some((r) => r.lastUserText === said(ALICE, 'slow')));
    const { answer } = await command(h, threadId, ALICE, 'reset');
    expect(answer.data.content).toContain('Session reset');
    expect(await h.settled(slow)).toBe('⚠️');
    expect(h.replyText(threadId, slow.id)).toContain('Stopped by /reset');
    const after = h.say(threadId, ALICE, 'new start');
    expect(await h.settled(after)).toBe('✅');
    const last = h.mainRequests().at(-1)!;
    expect(last.sessionId).not.toBe(firstSession);
    expect(JSON.stringify(last.body)).not.toContain('>hello</message>');
  });
});

describe('approvals by button', () => {
  const script: Script = [
    { match: { toolResult: true }, reply: [{ type: 'text', text: 'after the tool' }], times: 'always' },
    {
      match: { text: 'write notes' },
      reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo approved >> notes.txt' } }],
      times: 'always',
    },
    { reply: [{ type: 'text', text: 'ok' }], times: 'always' },
  ];

  async function agenticThread(harness: Harness) {
    await harness.link(ALICE, ALICE_TOKEN);
    await harness.link(BOB, BOB_TOKEN);
    const { message, threadId } = await harness.mention(ALICE, 'hello');
    await harness.settled(message);
    await command(harness, threadId, ALICE, 'mode', { mode: 'agentic' });
    return threadId;
  }

  const requestMessage = (harness: Harness, threadId: string) =>
    harness.discord.waitFor(() => harness.botMessages(threadId).find((m) => m.components.length > 0), {
      label: 'the approval request',
    });
  const customId = (message: { components: unknown[] }, choice: string) =>
    JSON.stringify(message.components).match(new RegExp(`bubble-approve:[0-9a-f]{24}:${choice}`))![0];

  it("a command asks the turn's sender; another user's click does not count; the sender's Allow once lets it run", async () => {
    h = await startHarness({ script, config: (c) => (c.claude.approvals = 'buttons') });
    const threadId = await agenticThread(h);
    const turn = h.say(threadId, ALICE, 'write notes');
    const request = await requestMessage(h, threadId);
    expect(request.content).toContain('<@2001>');
    expect(request.content).toContain('**Bash**');
    expect(request.content).toContain('echo approved >> notes.txt');
    const bobClick = h.discord.clickButton({
      channelId: threadId,
      user: BOB,
      messageId: request.id,
      customId: customId(request, 'once'),
    });
    const bobAnswer = await h.discord.waitFor(() => bobClick.callbacks[0]);
    expect(bobAnswer.type).toBe(4);
    expect(bobAnswer.data.flags & 64).toBe(64);
    expect(bobAnswer.data.content).toContain('Only <@2001>');
    expect(h.discord.message(request.id)!.components.length).toBeGreaterThan(0);

    const aliceClick = h.discord.clickButton({
      channelId: threadId,
      user: ALICE,
      messageId: request.id,
      customId: customId(request, 'once'),
    });
    const update = await h.discord.waitFor(() => aliceClick.callbacks[0]);
    expect(update.type).toBe(7);
    // The double refuses (10062) a callback later than Discord's 3 s, so an accepted update was in time.
    expect(aliceClick.acknowledgedAt).toBeDefined();
    expect(await h.settled(turn)).toBe('✅');
    expect(h.discord.message(request.id)!.content).toContain('Allowed once by <@2001>');
    const toolTurn = h.mainRequests().find((r) => r.toolResults.some((t) => t.toolName === 'Bash'))!;
    expect(toolTurn.toolResults.find((t) => t.toolName === 'Bash')!.isError).toBe(false);
    expect(readFileSync(join(h.config.claude.workspaceRoot, threadId, 'notes.txt'), 'utf8')).toBe('approved\n');
  });

  it('Deny refuses the call; Allow in this thread is remembered for the next turn of that sender', async () => {
    h = await startHarness({ script, config: (c) => (c.claude.approvals = 'buttons') });
    const threadId = await agenticThread(h);
    const denied = h.say(threadId, ALICE, 'write notes');
    const first = await requestMessage(h, threadId);
    h.discord.clickButton({ channelId: threadId, user: ALICE, messageId: first.id, customId: customId(first, 'deny') });
    await h.settled(denied);
    const refusedTurn = h.mainRequests().find((r) => r.toolResults.some((t) => t.toolName === 'Bash'))!;
    expect(refusedTurn.toolResults[0]!.isError).toBe(true);
    expect(JSON.stringify(refusedTurn.body)).toContain('denied this tool call');

    const allowed = h.say(threadId, ALICE, 'write notes');
    const second = await h.discord.waitFor(() =>
      h!.botMessages(threadId, denied.id).find((m) => m.components.length > 0 && m.id !== first.id),
    );
    h.discord.clickButton({
      channelId: threadId,
      user: ALICE,
      messageId: second.id,
      customId: customId(second, 'thread'),
    });
    expect(await h.settled(allowed)).toBe('✅');
    const asksBefore = h.botMessages(threadId).filter((m) => m.content.startsWith('🔐')).length;
    const remembered = h.say(threadId, ALICE, 'write notes');
    expect(await h.settled(remembered)).toBe('✅');
    expect(h.botMessages(threadId).filter((m) => m.content.startsWith('🔐')).length).toBe(asksBefore);
    expect(readFileSync(join(h.config.claude.workspaceRoot, threadId, 'notes.txt'), 'utf8')).toBe(
      'approved\napproved\n',
    );
  });

  it('no answer within the timeout denies', async () => {
    h = await startHarness({
      script,
      config: (c) => Object.assign(c.claude, { approvals: 'buttons', approvalTimeoutSeconds: 1 }),
    });
    const threadId = await agenticThread(h);
    const turn = h.say(threadId, ALICE, 'write notes');
    const request = await requestMessage(h, threadId);
    await h.settled(turn);
    await h.discord.waitFor(() => h!.discord.message(request.id)!.content.includes('No answer within 1 s'));
    expect(h.discord.message(request.id)!.components).toEqual([]);
    const toolTurn = h.mainRequests().find((r) => r.toolResults.length > 0)!;
    expect(toolTurn.toolResults[0]!.isError).toBe(true);
  });
});

describe('what agentic tools can reach', () => {
  it("a thread's commands cannot read the bot's files, another thread's workspace or its temp folder", async () => {
    h = await startHarness({
      script: [
        { match: { toolResult: true }, reply: [{ type: 'text', text: 'done' }], times: 'always' },
        {
          match: { text: 'prepare' },
          reply: [
            {
              type: 'tool_use',
              name: 'Bash',
              input: {
                command: 'echo SECRET-TMP > "$TMPDIR/leak.txt"; echo SECRET-WS > mine.txt; echo "tmp is $TMPDIR"',
              },
            },
          ],
        },
        { reply: [{ type: 'text', text: 'ok' }], times: 'always' },
      ],
    });
    await h.link(ALICE, ALICE_TOKEN);
    await h.link(BOB, BOB_TOKEN);
    const a = await h.mention(ALICE, 'hello');
    await h.settled(a.message);
    await command(h, a.threadId, ALICE, 'mode', { mode: 'agentic' });
    const prepare = h.say(a.threadId, ALICE, 'prepare');
    expect(await h.settled(prepare)).toBe('✅');
    expect(readFileSync(join(h.config.claude.workspaceRoot, a.threadId, 'mine.txt'), 'utf8')).toBe('SECRET-WS\n');
    const prepared = JSON.stringify(h.mainRequests().at(-1)!.body);
    const tmp = /tmp is (\S+?)\\n/.exec(prepared)?.[1];
    expect(tmp).toBeDefined();

    const b = await h.mention(BOB, 'hello');
    await h.settled(b.message);
    await command(h, b.threadId, BOB, 'mode', { mode: 'agentic' });
    // Paths made at run time (not written in the command), so it is the sandbox that must refuse them,
    // not only the CLI's check of the command line.
    const probes = [
      // Each sender's own temp folder in the thread, or the CLI's folder inside it.
      `cat "$base/tmp/${a.threadId}/"*/leak.txt "$base/tmp/${a.threadId}/"*/*/leak.txt`,
      `cat "$base/workspaces/${a.threadId}/mine.txt"`,
      'head -c 15 "$base/state.db"',
      'ls "$base/claude"',
      'env',
    ];
    // Written to a script first: the CLI's own check of the command line refuses any path outside the
    // workspace it can see, even one computed at run time, so this reaches the sandbox itself.
    const script = ['base=$(cd ../.. && pwd)', ...probes.map((p, i) => `echo "== ${i}"; ${p} 2>&1`)].join('\n');
    const probeCommand = `printf '%s\\n' '${script.replace(/'/g, `'\\''`)}' > probe.sh && sh probe.sh`;
    h.model.setScript([
      { match: { toolResult: true }, reply: [{ type: 'text', text: 'probed' }], times: 'always' },
      { match: { text: 'probe' }, reply: [{ type: 'tool_use', name: 'Bash', input: { command: probeCommand } }] },
    ]);
    const probe = h.say(b.threadId, BOB, 'probe');
    expect(await h.settled(probe)).toBe('✅');
    const body = h.mainRequests().at(-1)!.body as { messages: Array<{ content: unknown }> };
    const results = body.messages
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((c: { type?: string }) => c.type === 'tool_result') as Array<{ content: unknown; is_error?: boolean }>;
    const output = JSON.stringify(results.at(-1)!.content);
    // The command ran (it was not refused before running), and every probe came back empty-handed.
    expect(results.at(-1)!.is_error ?? false).toBe(false);
    expect(output).toContain('== 4');
    expect(output).not.toContain('SECRET-TMP');
    expect(output).not.toContain('SECRET-WS');
    expect(output).not.toContain('SQLite format');
    expect(output).not.toContain('projects');
    expect(output).not.toContain(BOB_TOKEN);
    expect(output).not.toContain('CLAUDE_CODE_OAUTH_TOKEN=');
  }, 60_000);
});
