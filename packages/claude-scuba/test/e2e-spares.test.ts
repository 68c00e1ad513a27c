import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '@bubble/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { runText, startScubaWorld, waitForLog, type ScubaProcess, type ScubaWorld } from './support/scuba-world.js';
import {
  botPart,
  botRuns,
  chunkOf,
  finishedOf,
  firstDelta,
  outputText,
  quickRule,
  slowRule,
} from './support/turn-helpers.js';

/**
 * Spare CLIs (issue 19, "A spare engine"), end to end: the real server, the
 * real claude-scuba process, the real CLI (prewarmed, then claimed) and the
 * model double.
 */
let world: ScubaWorld | undefined;
const stopped: number[] = [];
afterEach(async () => {
  // A spare stopped by a test gets its signals again, so it can exit.
  for (const pid of stopped.splice(0)) signal(pid, 'SIGCONT');
  await world?.close();
  world = undefined;
});

const finished = (w: ScubaWorld) => (all: EventEnvelope[]) =>
  all.filter((e) => e.principalId === w.botId && e.type === 'run_finished').length;
const after = {
  name: 'after',
  match: { toolResult: true as const },
  reply: [{ type: 'text' as const, text: 'Done.' }],
  times: 'always' as const,
};
const bash = (id: string, command: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'Bash',
  input: { command, description: 'probe' },
});
const logCount = (bot: ScubaProcess, msg: string) => bot.logs.filter((l) => l.msg === msg).length;

/** The Claude CLIs the bot process runs (its direct children running the CLI binary). */
function cliChildren(botPid: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return (
          readFileSync(`/proc/${p}/stat`, 'utf8').split(' ')[3] === String(botPid) &&
          readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('claude')
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

function alive(pid: number): boolean {
  try {
    // A zombie has exited: only its parent's wait is missing.
    return !/^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/\(.*\)/, 'x'));
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function until(predicate: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Alice says `text` on `threadId` (one complete run). */
async function say(w: ScubaWorld, threadId: string, text: string): Promise<void> {
  const runId = `h-${Math.random().toString(36).slice(2, 10)}`;
  await w.alice.appendEvents(threadId, [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't0', delta: text } } },
    { type: 'run_finished', data: { runId, status: 'completed' } },
  ]);
}

describe('spare CLIs (limits.spareEngines)', () => {
  it('a cold turn is served by the parked spare, whose tool callbacks reach the thread; another spare parks; stop leaves no CLI', async () => {
    world = await startScubaWorld({
      script: [
        {
          name: 'call',
          match: { text: 'open a side thread' },
          reply: [{ type: 'tool_use', id: 'toolu_sp1', name: 'mcp__bubble__open_subthread', input: { title: 'Side' } }],
        },
        {
          name: 'after',
          match: { toolResult: { name: 'mcp__bubble__open_subthread' } },
          reply: [{ type: 'text', text: 'Opened it from a spare.' }],
        },
      ],
    });
    const w = world;
    const bot = w.startBot();
    const parked = await waitForLog(bot, (l) => l.msg === 'spare CLI parked', 'a spare parked');
    expect(parked).toMatchObject({ component: 'spare-engine', spareId: 'spare-1' });

    await w.say('open a side thread');
    // The approval is asked through the spare's canUseTool, which reaches this thread's tool gate only once claimed.
    await w.waitFor((all) => all.some(botPart(w, 'tool-approval-request', 'toolu_sp1')), {
      what: 'the approval request',
    });
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_sp1', decision: 'allow' },
    });
    const events = await w.waitFor((all) => finished(w)(all) > 0, { what: 'the answer' });
    const claimed = bot.logs.find((l) => l.msg === 'spare CLI claimed');
    expect(claimed).toMatchObject({ threadId: w.threadId, spareId: 'spare-1' });
    expect(bot.logs.filter((l) => l.msg === 'opening the Claude query')).toEqual([
      expect.objectContaining({ threadId: w.threadId, spare: true }),
    ]);
    const [runId] = botRuns(w, events);
    expect(runText(events, runId!)).toBe('Opened it from a spare.');
    // The local tool ran through the spare's MCP server, for this thread.
    const output = outputText(events.find(botPart(w, 'tool-output-available', 'toolu_sp1'))!);
    expect(output).toMatch(new RegExp(`${w.threadId}\\.sub-`));
    // The claimed spare was told whose thread it is.
    const request = w.double.requests.find((r) => r.kind === 'main' && r.lastUserText.includes('open a side thread'))!;
    expect(JSON.stringify((request.body as { system?: unknown }).system)).toContain(
      `a participant in the Bubble thread ${w.threadId}`,
    );

    // Another spare parks in the background.
    await waitForLog(bot, (l) => l.msg === 'spare CLI parked' && l.spareId === 'spare-2', 'a second spare');
    const clis = cliChildren(bot.child.pid!);
    expect(clis).toHaveLength(2);
    expect(await bot.stop()).toEqual({ code: 0, signal: null });
    await until(() => clis.every((pid) => !alive(pid)), 'every CLI of the bot to exit', 15_000);
    // The spares' temp folders went with them.
    expect(readdirSync(join(w.dir, 'tmp')).filter((name) => name.startsWith('.spare-'))).toEqual([]);
  }, 60_000);

  it("a thread on a spare works in its own workspace, in the sandbox, and reaches no other thread's files", async () => {
    world = await startScubaWorld({ script: [after] });
    const w = world;
    const { thread: other } = await w.alice.createThread({ title: 'thread B' });
    const wsOther = join(w.dir, 'workspaces', other.threadId);
    mkdirSync(wsOther, { recursive: true });
    writeFileSync(join(wsOther, 'b-secret.txt'), 'TOP-SECRET-B');
    const home = join(w.dir, 'bot-user-home');
    mkdirSync(home);
    writeFileSync(join(home, 'private-note.txt'), 'HOME-SECRET');
    const configPath = w.writeConfig({
      claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash', 'Read'] },
    });
    // Outside every folder of the bot. Reads being an allow-list, the sandbox's root is an empty stand-in (a tmpfs
    // that goes with the command): the write lands there, never on the host (engine README, "The sandbox").
    const outside = join(tmpdir(), `scuba-spare-outside-${Math.random().toString(36).slice(2, 10)}`);
    const probe = [
      'echo in > inside.txt && echo WROTE-INSIDE',
      `d=${join(w.dir, 'workspaces')}; cat $d/${other.threadId}/b-secret.txt 2>/dev/null || echo CANNOT-READ-B`,
      `cat ${configPath} 2>&1 | head -c 200; echo`,
      `cat ${join(home, 'private-note.txt')} 2>&1; echo`,
      `(echo x > ${outside}) 2>&1 || echo WRITE-OUTSIDE-REFUSED`,
      'echo "TMP=$TMPDIR"',
      `ls -a ${join(w.dir, 'tmp')} 2>&1 | head -c 200; echo`,
    ].join('; ');
    w.double.setScript([
      { name: 'probe', match: { text: 'probe the sandbox' }, reply: [bash('toolu_sp_probe', probe)] },
      {
        name: 'read-own',
        match: { text: 'read my file' },
        reply: [{ type: 'tool_use', id: 'toolu_sp_own', name: 'Read', input: { file_path: 'inside.txt' } }],
      },
      {
        name: 'read-other',
        match: { text: 'read the other file' },
        reply: [
          {
            type: 'tool_use',
            id: 'toolu_sp_other',
            name: 'Read',
            input: { file_path: join(wsOther, 'b-secret.txt') },
          },
        ],
      },
      after,
    ]);
    const bot = w.startBot({ configPath, env: { HOME: home } });
    await waitForLog(bot, (l) => l.msg === 'spare CLI parked', 'a spare parked');

    await say(w, w.threadId, 'probe the sandbox');
    await w.waitFor((all) => all.some(botPart(w, 'tool-approval-request', 'toolu_sp_probe')), {
      what: 'the approval request of the probe',
    });
    expect(bot.logs.find((l) => l.msg === 'spare CLI claimed')).toMatchObject({ threadId: w.threadId });
    await w.alice.appendEvent(w.threadId, {
      type: 'tool_call_approval',
      data: { toolCallId: 'toolu_sp_probe', decision: 'allow' },
    });
    let events = await w.waitFor(
      (all) => all.some(botPart(w, 'tool-output-available', 'toolu_sp_probe')) && finished(w)(all) >= 1,
      { what: 'the probe output' },
    );
    const seen = outputText(events.find(botPart(w, 'tool-output-available', 'toolu_sp_probe'))!);
    const wsOwn = join(w.dir, 'workspaces', w.threadId);
    expect(seen).toContain('WROTE-INSIDE');
    expect(readFileSync(join(wsOwn, 'inside.txt'), 'utf8')).toBe('in\n');
    expect(seen).toContain('CANNOT-READ-B');
    expect(seen).not.toContain('TOP-SECRET-B');
    expect(seen).not.toContain('"principalId"'); // the config file
    expect(seen).not.toContain('HOME-SECRET');
    expect(existsSync(outside)).toBe(false);
    // Its temp folder is the spare's own, and no other thread's temp folder is in its sight.
    expect(seen).toMatch(new RegExp(`TMP=${join(w.dir, 'tmp')}/\\.spare-spare-1-[0-9a-f]{8}`));
    expect(seen).not.toContain(other.threadId);
    expect(seen).not.toContain('.spare-spare-2'); // nor the next spare's, should it have started by now

    // The file tools: its own workspace yes, another thread's no (without asking anyone).
    await say(w, w.threadId, 'read my file');
    events = await w.waitFor((all) => finished(w)(all) >= 2, { what: 'the read of its own file' });
    expect(outputText(events.find(botPart(w, 'tool-output-available', 'toolu_sp_own'))!)).toContain('in');
    await say(w, w.threadId, 'read the other file');
    events = await w.waitFor((all) => finished(w)(all) >= 3, { what: 'the refused read' });
    const refused = events.find(botPart(w, 'tool-output-error', 'toolu_sp_other'))!;
    expect(chunkOf(refused).errorText).toMatch(/blockReadsOutsideWorkingDirectories|is private to this bot/);
    expect(JSON.stringify(events)).not.toContain('TOP-SECRET-B');
    expect(events.some(botPart(w, 'tool-approval-request', 'toolu_sp_other'))).toBe(false);
    console.log(`sandbox probe on a claimed spare:\n${seen}`);
  }, 90_000);

  it('with one CLI slot: no spare starts while a thread runs, a waiting thread takes its turn, and a resumed turn closes the spare for its slot', async () => {
    world = await startScubaWorld({
      script: [slowRule('slow A', 20, 100), quickRule('hi B', 'Hello B.'), quickRule('again A', 'Again, A.')],
    });
    const w = world;
    const { thread: second } = await w.alice.createThread({ title: 'thread B' });
    await w.alice.addParticipant(second.threadId, w.botId, 'member');
    const bot = w.startBot({
      configPath: w.writeConfig({ limits: { maxActiveQueries: 1, idleQueryTimeoutSeconds: 2 } }),
    });
    await waitForLog(bot, (l) => l.msg === 'spare CLI parked', 'a spare in the one slot');

    await say(w, w.threadId, 'slow A');
    await w.waitFor(firstDelta(w), { what: "A's first words" });
    expect(bot.logs.find((l) => l.msg === 'spare CLI claimed')).toMatchObject({ threadId: w.threadId });
    await say(w, second.threadId, 'hi B');
    await waitForLog(
      bot,
      (l) => l.msg === 'turn waits for a CLI slot' && l.threadId === second.threadId,
      'B waits for the slot',
    );
    const b = await w.waitFor((all) => finished(w)(all) === 1, { threadId: second.threadId, what: "B's answer" });
    expect(runText(b, botRuns(w, b)[0]!)).toBe('Hello B.');
    // A's turn ran in the spare's slot and B's in A's: no spare was started while the slot was taken.
    expect(logCount(bot, 'spare CLI starting')).toBe(1);
    expect(logCount(bot, 'no free CLI slot for a spare: none is started')).toBeGreaterThan(0);

    // B's CLI idles out: the slot is free, and a spare takes it.
    await waitForLog(bot, (l) => l.msg === 'spare CLI parked' && l.spareId === 'spare-2', 'a spare in the freed slot');
    // A's session was closed for B: its next turn resumes it, which a spare cannot, so the spare gives its slot up.
    await say(w, w.threadId, 'again A');
    const a = await w.waitFor((all) => finished(w)(all) === 2, { what: "A's resumed answer" });
    const runs = botRuns(w, a);
    expect(runText(a, runs[1]!)).toBe('Again, A.');
    expect(finishedOf(w, a, runs[1]!)?.data).toMatchObject({ status: 'completed' });
    expect(bot.logs.find((l) => l.msg === 'spare CLI closed to free its slot')).toMatchObject({
      spareId: 'spare-2',
      reason: `slot wanted by ${w.threadId}`,
    });
    const opens = bot.logs.filter((l) => l.msg === 'opening the Claude query' && l.threadId === w.threadId);
    expect(opens.map((l) => [l.spare, typeof l.resume])).toEqual([
      [true, 'undefined'],
      [undefined, 'string'],
    ]);
    const resumed = w.double.requests.find((r) => r.kind === 'main' && r.lastUserText.includes('again A'))!;
    expect(JSON.stringify((resumed.body as { messages?: unknown }).messages)).toContain('slow A');
  }, 90_000);

  it('a spare that does not answer its claim is given up for a normal query, and the message is answered once', async () => {
    world = await startScubaWorld({ script: [quickRule('hi there', 'Hello once.', 'always')] });
    const w = world;
    const bot = w.startBot();
    await waitForLog(bot, (l) => l.msg === 'spare CLI parked', 'a spare parked');
    const [spare] = cliChildren(bot.child.pid!);
    expect(spare).toBeDefined();
    // The parked CLI stops answering (as a wedged process would).
    signal(spare!, 'SIGSTOP');
    stopped.push(spare!);

    await w.say('hi there');
    const events = await w.waitFor((all) => finished(w)(all) === 1, { what: 'the answer', timeoutMs: 40_000 });
    expect(bot.logs.find((l) => l.msg === 'spare CLI refused; starting a normal query instead')).toMatchObject({
      threadId: w.threadId,
      spareId: 'spare-1',
      reason: expect.stringContaining('got no answer'),
    });
    expect(botRuns(w, events)).toHaveLength(1);
    expect(runText(events, botRuns(w, events)[0]!)).toBe('Hello once.');
    expect(w.double.requests.filter((r) => r.kind === 'main' && r.lastUserText.includes('hi there'))).toHaveLength(1);
    // Nothing more comes (no second answer from the spare once it runs again).
    signal(spare!, 'SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(botRuns(w, await w.events())).toHaveLength(1);
    expect(w.double.requests.filter((r) => r.kind === 'main' && r.lastUserText.includes('hi there'))).toHaveLength(1);
  }, 60_000);

  it('spareEngines 0 parks none: the first turn starts its own CLI', async () => {
    world = await startScubaWorld({ script: [quickRule('hi there', 'Hello, no spare.')] });
    const w = world;
    const bot = w.startBot({ configPath: w.writeConfig({ limits: { spareEngines: 0 } }) });
    await waitForLog(bot, (l) => l.msg === 'claude-scuba running', 'the bot running');
    await w.say('hi there');
    const events = await w.waitFor((all) => finished(w)(all) === 1, { what: 'the answer' });
    expect(runText(events, botRuns(w, events)[0]!)).toBe('Hello, no spare.');
    expect(bot.logs.filter((l) => String(l.msg).startsWith('spare CLI'))).toEqual([]);
    expect(bot.logs.some((l) => l.msg === 'opening the Claude query' && l.threadId === w.threadId)).toBe(true);
  }, 30_000);
});
