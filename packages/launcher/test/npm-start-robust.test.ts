import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  LAUNCHER_BIN,
  listening,
  scubaProcesses,
  SERVER_BIN,
  startLauncher,
  until,
  type LauncherProcess,
} from './support/launcher-process.js';

/**
 * `npm start` when things go wrong, run as a user runs it: a second start on
 * the same data folder, a crashed one's lock, SIGINT sent to npm itself, the
 * bot's token revoked from the web UI, and what the terminal shows.
 */
let dir: string;
const running: LauncherProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'bubble-robust-'));
  mkdirSync(join(dir, 'home'));
});

afterAll(async () => {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function start(...args: Parameters<typeof startLauncher>): LauncherProcess {
  const p = startLauncher(...args);
  running.push(p);
  return p;
}

const textOf = (e: EventEnvelope) => (e.data.chunk as { delta?: string } | undefined)?.delta ?? '';

/** Says `text` on the welcome thread as you, and waits for the bot's completed answer after it. */
async function botAnswers(link: string, text: string): Promise<string> {
  const url = new URL(link);
  const you = new BubbleClient({ url: url.origin, token: /#token=(\S+)$/.exec(link)![1]! });
  const threadId = decodeURIComponent(url.pathname.split('/').pop()!);
  try {
    const sent = await you.appendEvents(threadId, [
      { type: 'run_started', data: { runId: `r-${text.replace(/\W+/g, '-')}-${Date.now()}` } },
    ]);
    const runId = String(sent.events[0]!.data.runId);
    await you.appendEvents(threadId, [
      { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
      { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
      { type: 'run_finished', data: { runId, status: 'completed' } },
    ]);
    const after = sent.events[0]!.seq;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const { events } = await you.readEvents(threadId, { after, limit: 1000 });
      const done = events.find((e) => e.principalId === 'claude' && e.type === 'run_finished');
      if (done !== undefined)
        return events
          .filter((e) => e.principalId === 'claude')
          .map(textOf)
          .join('');
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the bot did not answer "${text}"`);
  } finally {
    you.close();
  }
}

describe('one npm start per data folder', () => {
  it("refuses a second start on the same folder, naming the first one's pid, changing nothing; the first one's bot still restarts", async () => {
    const data = join(dir, 'shared');
    const port = await freePort();
    const first = start(['--port', String(port), '--data', data]);
    const link = await first.link();
    const launcherDir = join(data, 'launcher');
    const before = ['scuba.json', 'state.json'].map((f) => [
      readFileSync(join(launcherDir, f), 'utf8'),
      statSync(join(launcherDir, f)).mtimeMs,
    ]);
    const bots = scubaProcesses(data);
    expect(bots).toHaveLength(1);

    const otherPort = await freePort();
    const second = start(['--port', String(otherPort), '--data', data]);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toBe(
      `bubble-start: another Bubble (pid ${first.child.pid}, http://127.0.0.1:${port}) is running on the data folder ${data}; ` +
        `stop it first (kill ${first.child.pid}), or start this one with another --data folder\n`,
    );
    expect(second.stdout()).toBe('');
    expect(await listening(otherPort)).toBe(false);
    expect(
      ['scuba.json', 'state.json'].map((f) => [
        readFileSync(join(launcherDir, f), 'utf8'),
        statSync(join(launcherDir, f)).mtimeMs,
      ]),
    ).toEqual(before);
    expect(scubaProcesses(data)).toEqual(bots);

    // The first one's bot dies; its restart still finds its own server, and answers.
    process.kill(bots[0]!, 'SIGKILL');
    await until('the bot restarted', () => scubaProcesses(data).length === 1 && scubaProcesses(data)[0] !== bots[0]);
    expect(await botAnswers(link, 'are you still there')).toContain('a scripted stand-in for the model');

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
  }, 120_000);

  it('takes over the lock of a launcher that is gone (killed -9), and starts as before', async () => {
    const data = join(dir, 'crashed');
    const port = await freePort();
    const first = start(['--port', String(port), '--data', data]);
    const link = await first.link();
    first.child.kill('SIGKILL');
    await first.exited;
    // Its bot outlives it (nothing was there to stop it); a person would stop that too.
    for (const pid of scubaProcesses(data)) process.kill(pid, 'SIGKILL');
    await until('the orphaned bot gone', () => scubaProcesses(data).length === 0);
    const lock = JSON.parse(readFileSync(join(data, 'launcher', 'launcher.lock'), 'utf8'));
    expect(lock.pid).toBe(first.child.pid);

    const again = start(['--port', String(port), '--data', data]);
    expect(await again.link()).toBe(link);
    expect(JSON.parse(readFileSync(join(data, 'launcher', 'launcher.lock'), 'utf8')).pid).toBe(again.child.pid);
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  }, 120_000);
});

describe('signals', () => {
  it('stops everything when npm itself is sent SIGINT, as it does on SIGTERM', async () => {
    const data = join(dir, 'via-npm');
    const port = await freePort();
    const npm = start(['--port', String(port), '--data', data], { via: 'npm', home: join(dir, 'home') });
    await npm.link();
    expect(scubaProcesses(data)).toHaveLength(1);
    npm.child.kill('SIGINT');
    const stopped = await Promise.race([
      npm.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 20_000)),
    ]);
    if (!stopped)
      throw new Error(
        'npm start did not stop on SIGINT: npm passes it to its child, and a shell there swallows it. ' +
          'The root package.json must run the launcher with exec ("start": "exec node packages/launcher/bin/bubble-start.js").',
      );
    await until('everything stopped', async () => !(await listening(port)) && scubaProcesses(data).length === 0);
    expect(npm.stdout()).toContain('stopping (SIGINT)');
  }, 90_000);

  it('stops once, cleanly, on a Ctrl-C that reaches it twice (from the terminal and from npm)', async () => {
    const data = join(dir, 'ctrl-c');
    const port = await freePort();
    const npm = start(['--port', String(port), '--data', data], { via: 'npm', home: join(dir, 'home') });
    await npm.link();
    // A terminal's Ctrl-C: SIGINT to the whole foreground process group (npm, the launcher, its bot).
    process.kill(-npm.child.pid!, 'SIGINT');
    await npm.exited;
    // npm's own status follows its child's (0), or its shell's when a shell sits between them (killed by SIGINT).
    expect(npm.stdout().match(/stopping \(SIGINT\)/g)).toHaveLength(1);
    expect(npm.stderr()).not.toContain('second signal');
    await until('everything stopped', async () => !(await listening(port)) && scubaProcesses(data).length === 0);
  }, 90_000);
});

describe("the bot's token, revoked in the web UI", () => {
  it('is replaced once and said once, in a plain sentence; the bot answers again, and nothing loops', async () => {
    const data = join(dir, 'revoked');
    const port = await freePort();
    const launcher = start(['--port', String(port), '--data', data]);
    const link = await launcher.link();
    const token = /#token=(\S+)$/.exec(link)![1]!;
    const you = new BubbleClient({ url: `http://127.0.0.1:${port}`, token });
    const botPid = scubaProcesses(data)[0];
    const stateBefore = JSON.parse(readFileSync(join(data, 'launcher', 'state.json'), 'utf8'));
    try {
      // What Bots → Revoke does.
      for (const t of await you.listTokens('claude')) await you.revokeToken('claude', t.tokenId);
      await until('the launcher to say so', () => launcher.stderr().includes("the bot's token was refused"));
      await until('a new bot process', () => scubaProcesses(data).length === 1 && scubaProcesses(data)[0] !== botPid);
      expect(await botAnswers(link, 'hello again')).toContain('a scripted stand-in for the model');
      // A few seconds more: nothing restarts, nothing repeats.
      await new Promise((r) => setTimeout(r, 4_000));
      const said = launcher.stderr().trim().split('\n');
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(
        /^bubble-start: the bot's token was refused \(revoked in the web UI\?\); gave "claude" a new one \(tok_[\w-]+\) and restarted it$/,
      );
      const stateAfter = JSON.parse(readFileSync(join(data, 'launcher', 'state.json'), 'utf8'));
      expect(stateAfter.botToken).not.toBe(stateBefore.botToken);
      expect({ ...stateAfter, botToken: 'x' }).toEqual({ ...stateBefore, botToken: 'x' });
      const bot = new BubbleClient({ url: `http://127.0.0.1:${port}`, token: stateAfter.botToken });
      expect((await bot.whoami()).principalId).toBe('claude');
      bot.close();
    } finally {
      you.close();
    }
    launcher.child.kill('SIGINT');
    expect(await launcher.exited).toBe(0);

    // Revoked while Bubble was stopped: the next start says so, and the bot answers.
    const revoke = spawn(process.execPath, [SERVER_BIN, 'principal', 'revoke-tokens', 'claude', '--data', data], {
      stdio: 'ignore',
    });
    expect(await new Promise((r) => revoke.on('exit', r))).toBe(0);
    const next = start(['--port', String(port), '--data', data]);
    expect(await next.link()).toBe(link);
    expect(next.stderr()).toBe(`bubble-start: the bot's saved token had been revoked; gave "claude" a new one\n`);
    expect(await botAnswers(link, 'and again')).toContain('a scripted stand-in for the model');
    next.child.kill('SIGINT');
    expect(await next.exited).toBe(0);
  }, 150_000);
});

describe('what the terminal shows', () => {
  it('logs pino-pretty lines at a terminal and JSON lines elsewhere', async () => {
    const data = join(dir, 'logs');
    const port = await freePort();
    const args = ['--port', String(port), '--data', data];
    // At a terminal: `script` gives the launcher a pseudo-terminal for stdout and stderr.
    const command = [process.execPath, LAUNCHER_BIN, ...args].map((a) => `'${a}'`).join(' ');
    const typescript = join(dir, 'tty.txt');
    writeFileSync(typescript, '');
    const tty = spawn('script', ['-qefc', command, typescript], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', BUBBLE_LOG_LEVEL: 'info', TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let shown = '';
    tty.stdout.setEncoding('utf8').on('data', (c: string) => (shown += c));
    await until('the link at the terminal', () => shown.includes('Sign in: '), 60_000);
    await until('a request logged', () => /INFO.*request/.test(shown), 10_000);
    const ttyExit = new Promise((r) => tty.on('exit', r));
    // Ctrl-C, typed at that terminal.
    tty.stdin.write('\x03');
    await ttyExit;
    const logLines = shown.split(/\r?\n/).filter((l) => l.includes('INFO'));
    expect(logLines.length).toBeGreaterThan(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: pino-pretty colours its level names.
    expect(logLines[0]).toMatch(/^\[\d\d:\d\d:\d\d\] (\x1b\[\d+m)?INFO/);
    expect(shown).not.toMatch(/^\{"level"/m);

    // Elsewhere (a pipe, a service's journal): JSON, one object a line.
    const piped = start(args, { env: { BUBBLE_LOG_LEVEL: 'info' } });
    await piped.link();
    await until('a request logged', () => piped.stderr().includes('"msg":"request"'), 10_000);
    piped.child.kill('SIGINT');
    expect(await piped.exited).toBe(0);
    for (const line of piped.stderr().trim().split('\n')) {
      if (line.startsWith('bubble-start: ')) continue;
      expect(() => JSON.parse(line), line).not.toThrow();
    }
  }, 120_000);
});
