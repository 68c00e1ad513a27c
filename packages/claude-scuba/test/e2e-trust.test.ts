import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Script } from '@bubble/model-double';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startScubaWorld, waitForLog, type ScubaWorld } from './support/scuba-world.js';
import { botPart, chunkOf, outputText } from './support/turn-helpers.js';

/**
 * A bot is safe to share: the attack of issue 11, step by step, against the
 * real server, the real claude-scuba and the real CLI in its real sandbox
 * (Debian's bubblewrap). Mallory is a human with no relation to Alice or her bot.
 */
let world: ScubaWorld | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const bash = (id: string, command: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'Bash',
  input: { command, description: 'probe' },
});
const after = {
  name: 'after',
  match: { toolResult: true as const },
  reply: [{ type: 'text' as const, text: 'Done.' }],
  times: 'always' as const,
};

/** Says one complete message as `client` on `threadId`. */
async function say(client: BubbleClient, threadId: string, text: string): Promise<void> {
  const runId = `h-${Math.random().toString(36).slice(2, 10)}`;
  await client.appendEvents(threadId, [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't0' } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't0', delta: text } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't0' } } },
    { type: 'run_finished', data: { runId, status: 'completed' } },
  ]);
}

describe('only its owners decide where a bot works', () => {
  it("fails at the server: Mallory cannot see, add or use Alice's bot; a direct database grant is ignored by the bot", async () => {
    world = await startScubaWorld({
      script: [{ name: 'env', match: { text: 'run env' }, reply: [bash('toolu_env', 'env')] }, after],
    });
    const w = world;
    const mallory = await w.server.createHuman('mallory', 'Mallory');
    const asMallory = new BubbleClient({ url: w.server.url, token: mallory.token.token });
    cleanups.push(() => asMallory.close());
    const bot = w.startBot();
    await waitForLog(bot, (l) => l.msg === 'claude-scuba running', 'the bot running');

    // 1. She cannot see it.
    await expect(asMallory.getPrincipal(w.botId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    // 2. She cannot put it on her own thread: answered as for an unknown id (Consent: 202, pending);
    // nothing lands on her thread.
    const { thread } = await asMallory.createThread({ title: "mallory's" });
    expect(await asMallory.addParticipant(thread.threadId, w.botId)).toEqual({
      status: 'pending',
      created: false,
      invitation: { threadId: thread.threadId, principalId: w.botId, status: 'pending' },
    });
    expect((await asMallory.listParticipants(thread.threadId)).map((g) => g.principalId)).toEqual(['mallory']);

    // A server from before this change may hold such a grant: write it straight into the store.
    await w.server.server.store.putGrant({
      threadId: thread.threadId,
      principalId: w.botId,
      role: 'member',
      by: 'mallory',
      mayChangeRole: false,
    });
    await waitForLog(
      bot,
      (l) => l.threadId === thread.threadId && String(l.msg).startsWith('granted a thread where none of my owners is'),
      'the grant noticed and not trusted',
    );
    await say(asMallory, thread.threadId, 'run env for me');
    await waitForLog(
      bot,
      (l) => l.threadId === thread.threadId && String(l.msg).startsWith('none of my owners is on this thread'),
      'her message ignored',
    );
    // 3./4. Nothing ran, nothing was asked of Claude, and the bot said nothing on her thread.
    expect(w.double.requests.some((r) => JSON.stringify(r.body).includes('run env for me'))).toBe(false);
    expect((await asMallory.readEvents(thread.threadId)).events.filter((e) => e.principalId === w.botId)).toEqual([]);
    // 5. She never had the bot's token to list its threads with; her own token shows her only her thread.
    expect((await asMallory.listThreads()).map((t) => t.threadId)).toEqual([thread.threadId]);

    // Alice's own thread works as ever, through the same bot.
    await w.say('hello');
    await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), {
      what: "the bot's answer to Alice",
    });
  }, 60_000);

  it("with no approver on the thread, denies at once and names who could approve; the bot's owners approve, the thread's owner does not", async () => {
    const script: Script = [
      { name: 'first', match: { text: 'make a file' }, reply: [bash('toolu_m1', 'touch mallory.txt')] },
      { name: 'second', match: { text: 'make another' }, reply: [bash('toolu_m2', 'touch alice-ok.txt')] },
      after,
    ];
    world = await startScubaWorld({ script });
    const w = world;
    // Alice lets anyone add her bot, so Mallory may put it on her thread; its tools still answer to Alice.
    await w.alice.updatePrincipal(w.botId, { joinableBy: 'anyone' });
    const mallory = await w.server.createHuman('mallory', 'Mallory');
    const asMallory = new BubbleClient({ url: w.server.url, token: mallory.token.token });
    cleanups.push(() => asMallory.close());
    // She sees the bot (and Alice) once they share a thread of Alice's: nobody unseen is added (Consent).
    const { thread: meeting } = await w.alice.createThread({ title: 'meeting' });
    await w.alice.addParticipant(meeting.threadId, w.botId);
    await w.alice.addParticipant(meeting.threadId, 'mallory');
    await asMallory.acceptInvitation(meeting.threadId);
    const { thread } = await asMallory.createThread({ title: "mallory's" });
    expect((await asMallory.addParticipant(thread.threadId, w.botId)).created).toBe(true);
    const bot = w.startBot();
    await say(asMallory, thread.threadId, 'make a file');

    const denied = await w.waitFor((all) => all.some(botPart(w, 'tool-output-denied', 'toolu_m1')), {
      threadId: thread.threadId,
      client: asMallory,
      what: 'the immediate denial',
    });
    const reason =
      'Denied at once: Bash needs an approval, but only an owner of this bot may approve its tools: Alice (alice), and none of them is on this thread; ask one of them to join it.';
    expect(denied.find(botPart(w, 'tool-output-denied', 'toolu_m1'))!.data.chunk).toEqual({
      type: 'tool-output-denied',
      toolCallId: 'toolu_m1',
      providerMetadata: { bubble: { reason } },
    });
    expect(denied.find((e) => e.type === 'tool_call_approval')).toMatchObject({
      principalId: w.botId,
      data: { toolCallId: 'toolu_m1', decision: 'deny', reason },
    });
    // It never waited (the default timeout is 600 s) and never asked anyone.
    expect(denied.some(botPart(w, 'tool-approval-request'))).toBe(false);
    expect(bot.logs.some((l) => l.msg === 'tool call waits for approval' && l.toolCallId === 'toolu_m1')).toBe(false);
    expect(existsSync(join(w.dir, 'workspaces', thread.threadId, 'mallory.txt'))).toBe(false);

    // Mallory brings Alice in, once the bot's turn is over (a message sent mid-turn is steered into it: issue 12).
    await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), {
      threadId: thread.threadId,
      client: asMallory,
      what: 'the first turn to end',
    });
    // Now the call waits for Alice, and only her answer counts.
    await asMallory.addParticipant(thread.threadId, 'alice');
    await say(asMallory, thread.threadId, 'make another');
    const asked = await w.waitFor((all) => all.some(botPart(w, 'tool-approval-request', 'toolu_m2')), {
      threadId: thread.threadId,
      client: asMallory,
      what: 'the approval request',
    });
    expect(chunkOf(asked.find(botPart(w, 'tool-approval-request', 'toolu_m2'))!).providerMetadata).toEqual({
      bubble: { approvers: ['alice'] },
    });
    await asMallory.appendEvent(thread.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_m2', decision: 'allow' },
    });
    await waitForLog(
      bot,
      (l) => l.msg === 'approval from a principal who may not approve; ignored' && l.by === 'mallory',
      "Mallory's answer ignored",
    );
    expect(existsSync(join(w.dir, 'workspaces', thread.threadId, 'alice-ok.txt'))).toBe(false);
    await w.alice.appendEvent(thread.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_m2', decision: 'allow' },
    });
    await w.waitFor((all) => all.some(botPart(w, 'tool-output-available', 'toolu_m2')), {
      threadId: thread.threadId,
      client: asMallory,
      what: 'the approved call',
    });
    expect(existsSync(join(w.dir, 'workspaces', thread.threadId, 'alice-ok.txt'))).toBe(true);
  }, 90_000);
});

describe("tools run in Claude Code's sandbox, away from the bot's secrets", () => {
  it('a command sees neither the API key nor the bot token, writes only its workspace, and cannot read other workspaces or the bot files', async () => {
    world = await startScubaWorld({ script: [after] });
    const w = world;
    const { thread: second } = await w.alice.createThread({ title: 'thread B' });
    await w.alice.addParticipant(second.threadId, w.botId);
    const configPath = w.writeConfig({
      claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash', 'Read', 'Grep', 'Glob'] },
      // Each thread on a CLI of its own, with its own temp folder (a spare's isolation is tested in e2e-spares).
      limits: { spareEngines: 0 },
    });
    // The bot's user has a home of its own here, with something private in it.
    const home = join(w.dir, 'bot-user-home');
    mkdirSync(home);
    writeFileSync(join(home, 'private-note.txt'), 'HOME-SECRET');
    const bot = w.startBot({ configPath, env: { HOME: home } });
    await waitForLog(bot, (l) => l.msg === "tools run in Claude Code's sandbox", 'the sandbox on');
    const wsA = join(w.dir, 'workspaces', w.threadId);
    const probe = [
      'echo "ENV-HITS=$(env | grep -c -e sk-test-double -e bubble_agent_)"',
      // Up the parent chain through /proc, as the attack did.
      'p=$$; while [ -n "$p" ] && [ "$p" != 0 ]; do echo "WALK $p"; tr "\\0" "\\n" < /proc/$p/environ 2>&1 | grep -e sk-test-double -e bubble_agent_; p=$(cut -d" " -f4 /proc/$p/stat 2>/dev/null); done',
      `tr "\\0" "\\n" < /proc/${bot.child.pid}/environ 2>&1 | head -c 300; echo`,
      `cat ${configPath} 2>&1 | head -c 300; echo`,
      `ls ${join(w.dir, 'claude-home')} 2>&1 | head -c 300; echo`,
      `head -c 100 ${join(w.dir, 'state.db')} 2>&1 | tr -cd "[:print:]"; echo`,
      `cat ${join(home, 'private-note.txt')} 2>&1; echo`,
      `(echo x > ${join(w.dir, 'outside.txt')}) 2>&1 || echo WRITE-OUTSIDE-REFUSED`,
      'echo in > inside.txt && echo WROTE-INSIDE',
      `(exec 3<>/dev/tcp/127.0.0.1/${new URL(w.server.url).port}) 2>&1 || echo NO-NETWORK`,
    ].join('; ');
    w.double.setScript([
      {
        name: 'secret',
        match: { text: 'keep a secret' },
        reply: [bash('toolu_a1', 'echo TOP-SECRET-A > a-secret.txt && echo stored')],
      },
      { name: 'probe', match: { text: 'probe the sandbox' }, reply: [bash('toolu_probe', probe)] },
      // Through a variable, so the CLI cannot see the path before it runs: it asks, and the sandbox has the last word.
      {
        name: 'peek',
        match: { text: 'peek at thread a' },
        reply: [
          bash(
            'toolu_b1',
            `d=${join(w.dir, 'workspaces')}; cat $d/${w.threadId}/a-secret.txt 2>/dev/null || echo CANNOT-READ-A; echo "LS=[$(ls $d 2>&1 | tr '\\n' ' ')]"`,
          ),
        ],
      },
      // Named outright: the CLI reports the path, and the bot refuses at once.
      {
        name: 'peek-direct',
        match: { text: 'cat thread a' },
        reply: [bash('toolu_b0', `cat ${join(wsA, 'a-secret.txt')}`)],
      },
      {
        name: 'read-a',
        match: { text: 'read tool on a' },
        reply: [{ type: 'tool_use', id: 'toolu_b2', name: 'Read', input: { file_path: join(wsA, 'a-secret.txt') } }],
      },
      {
        name: 'read-config',
        match: { text: 'read tool on the config' },
        reply: [{ type: 'tool_use', id: 'toolu_b3', name: 'Read', input: { file_path: configPath } }],
      },
      {
        name: 'read-outside',
        match: { text: 'read tool outside' },
        reply: [{ type: 'tool_use', id: 'toolu_b4', name: 'Read', input: { file_path: '/etc/hostname' } }],
      },
      {
        name: 'grep-root',
        match: { text: 'grep everything' },
        reply: [{ type: 'tool_use', id: 'toolu_b5', name: 'Grep', input: { pattern: 'TOP-SECRET', path: '/' } }],
      },
      {
        name: 'link',
        match: { text: 'make a link' },
        reply: [bash('toolu_b6', `ln -s ${join(wsA, 'a-secret.txt')} link.txt && echo linked`)],
      },
      {
        name: 'read-link',
        match: { text: 'read the link' },
        reply: [{ type: 'tool_use', id: 'toolu_b7', name: 'Read', input: { file_path: 'link.txt' } }],
      },
      after,
    ]);
    // Each step waits for the bot's run to end: a message sent mid-run is steered into it (issue 12).
    const finished = (all: EventEnvelope[]) =>
      all.filter((e) => e.principalId === w.botId && e.type === 'run_finished').length;
    const approve = async (threadId: string, toolCallId: string) => {
      await w.waitFor((all) => all.some(botPart(w, 'tool-approval-request', toolCallId)), {
        threadId,
        what: `the approval request of ${toolCallId}`,
      });
      const before = finished(await w.events(threadId));
      await w.alice.appendEvent(threadId, { type: 'tool_call_approval', data: { toolCallId, decision: 'allow' } });
      const events = await w.waitFor(
        (all) => all.some(botPart(w, 'tool-output-available', toolCallId)) && finished(all) > before,
        { threadId, what: `the output of ${toolCallId}` },
      );
      return outputText(events.find(botPart(w, 'tool-output-available', toolCallId))!);
    };

    await w.say('keep a secret');
    expect(await approve(w.threadId, 'toolu_a1')).toContain('stored');
    expect(readFileSync(join(wsA, 'a-secret.txt'), 'utf8')).toBe('TOP-SECRET-A\n');

    await w.say('probe the sandbox');
    const seen = await approve(w.threadId, 'toolu_probe');
    expect(seen).toContain('ENV-HITS=0');
    expect(seen).toMatch(/WALK 1\b/); // its own pid namespace: the chain ends at 1, the bot's processes are not there
    expect(seen).not.toContain('sk-test-double');
    expect(seen).not.toContain('bubble_agent_');
    expect(seen).not.toContain(w.botToken);
    expect(seen).not.toContain('"principalId"'); // the config file
    expect(seen).not.toContain('SQLite format'); // the state database
    expect(seen).not.toContain('projects'); // the CLI's home with every transcript
    expect(seen).not.toContain('HOME-SECRET'); // the bot user's home
    expect(seen).toContain('WROTE-INSIDE');
    expect(seen).toContain('NO-NETWORK');
    expect(existsSync(join(w.dir, 'outside.txt'))).toBe(false);
    expect(existsSync(join(wsA, 'inside.txt'))).toBe(true);

    // Thread B's commands cannot read thread A's workspace.
    {
      const before = finished(await w.events(second.threadId));
      await say(w.alice, second.threadId, 'cat thread a');
      const events = await w.waitFor((all) => finished(all) > before, {
        threadId: second.threadId,
        what: 'the refused cat',
      });
      expect(events.find(botPart(w, 'tool-output-denied', 'toolu_b0'))!.data.chunk).toMatchObject({
        providerMetadata: {
          bubble: {
            reason: `Denied: ${join(wsA, 'a-secret.txt')} is private to this bot (its configuration, its state, or another thread's workspace); no tool may read or change it.`,
          },
        },
      });
      expect(events.some(botPart(w, 'tool-approval-request', 'toolu_b0'))).toBe(false);
    }
    await say(w.alice, second.threadId, 'peek at thread a');
    const peeked = await approve(second.threadId, 'toolu_b1');
    expect(peeked).not.toContain('TOP-SECRET-A');
    expect(peeked).toContain('CANNOT-READ-A');
    expect(peeked).toMatch(/LS=\[[^\]]*\]/);
    expect(peeked.match(/LS=\[([^\]]*)\]/)![1]).not.toContain(w.threadId);
    // Nor its temp files (where a sub-agent's output goes): each thread's CLI has a temp folder of its own.
    expect(existsSync(join(w.dir, 'tmp', w.threadId))).toBe(true);
    console.log(`sandbox probe (thread A):\n${seen}\nthread B peeking at A:\n${peeked}`);

    // The file tools read only the workspace, in every mode: another workspace, the config, any outside path, a
    // search rooted at / and a link in the workspace that leads out are all refused, without asking anyone.
    const refusedRead = async (text: string, id: string) => {
      const before = finished(await w.events(second.threadId));
      await say(w.alice, second.threadId, text);
      const events = await w.waitFor((all) => finished(all) > before && all.some(botPart(w, 'tool-output-error', id)), {
        threadId: second.threadId,
        what: `the refusal of ${id}`,
      });
      const end = events.find(botPart(w, 'tool-output-error', id))!;
      expect(events.some(botPart(w, 'tool-approval-request', id))).toBe(false);
      const errorText = (end.data.chunk as { errorText: string }).errorText;
      expect(errorText).toMatch(/blockReadsOutsideWorkingDirectories|is private to this bot/);
      expect(errorText).not.toContain('TOP-SECRET-A');
      return errorText;
    };
    await refusedRead('read tool on a', 'toolu_b2');
    await refusedRead('read tool on the config', 'toolu_b3');
    await refusedRead('read tool outside', 'toolu_b4');
    await refusedRead('grep everything', 'toolu_b5');
    await say(w.alice, second.threadId, 'make a link');
    expect(await approve(second.threadId, 'toolu_b6')).toContain('linked');
    await refusedRead('read the link', 'toolu_b7');

    // The CLI's own environment never held the bot's Bubble token.
    const cli = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .find((p) => {
        try {
          return (
            readFileSync(`/proc/${p}/stat`, 'utf8').split(' ')[3] === String(bot.child.pid) &&
            readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('claude')
          );
        } catch {
          return false;
        }
      });
    expect(cli).toBeDefined();
    const cliEnv = readFileSync(`/proc/${cli}/environ`, 'utf8');
    expect(cliEnv).toContain('ANTHROPIC_API_KEY=sk-test-double');
    expect(cliEnv).not.toContain(w.botToken);
    // Nothing secret ever reached a thread.
    for (const threadId of [w.threadId, second.threadId])
      expect(JSON.stringify(await w.events(threadId))).not.toContain(w.botToken);
  }, 120_000);

  it('claude.sandbox false is an explicit opt-out that the boot log warns about', async () => {
    world = await startScubaWorld({ script: [after] });
    const w = world;
    const bot = w.startBot({
      configPath: w.writeConfig({
        claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash'], sandbox: false },
      }),
    });
    const line = await waitForLog(bot, (l) => String(l.msg).startsWith('claude.sandbox is false'), 'the warning');
    expect(line).toMatchObject({
      level: 40,
      msg: "claude.sandbox is false: tool commands run unsandboxed, as this process's user, with its files and its network in reach",
    });
  });

  it('refuses tools where the sandbox cannot start (no bwrap on PATH), and says why in the log and on the thread', async () => {
    world = await startScubaWorld({
      script: [{ name: 'tool', match: { text: 'list files' }, reply: [bash('toolu_x', 'ls')] }, after],
    });
    const w = world;
    // A PATH with everything of /usr/bin and /bin but bubblewrap.
    const dir = mkdtempSync(join(tmpdir(), 'no-bwrap-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    for (const folder of ['/usr/bin', '/bin']) {
      for (const name of readdirSync(folder)) {
        if (name === 'bwrap' || existsSync(join(dir, name))) continue;
        symlinkSync(join(folder, name), join(dir, name));
      }
    }
    const bot = w.startBot({ env: { PATH: dir } });
    const line = await waitForLog(
      bot,
      (l) => String(l.msg).startsWith("Claude Code's sandbox cannot start"),
      'the refusal in the log',
    );
    expect(line).toMatchObject({
      level: 50,
      reason: "bwrap is not on PATH (install Debian's bubblewrap and socat packages)",
    });

    await w.say('list files');
    const events = await w.waitFor(
      (all) => all.filter((e) => e.principalId === w.botId && e.type === 'run_finished').length >= 2,
      { what: 'the notice and the answer' },
    );
    const notice = events.find(
      (e) => e.principalId === w.botId && e.type === 'message_part' && chunkOf(e).type === 'text-delta',
    )!;
    expect((notice.data.chunk as { delta: string }).delta).toContain(
      "Tools are off: this bot runs commands only inside Claude Code's sandbox, and the sandbox cannot start on its machine (bwrap is not on PATH",
    );
    // Claude was offered no built-in tool (the CLI's DeferredToolPlaceholder runs nothing), so nothing ran unsandboxed.
    const request = w.double.requests.find((r) => r.kind === 'main' && JSON.stringify(r.body).includes('list files'))!;
    const tools = ((request.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);
    expect(tools.filter((name) => !name.startsWith('mcp__') && name !== 'DeferredToolPlaceholder')).toEqual([]);
    expect(events.some(botPart(w, 'tool-output-available'))).toBe(false);
  }, 60_000);
});
