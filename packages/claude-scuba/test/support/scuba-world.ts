import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelDouble, type ModelDouble, type Script } from '@bubble/model-double';
import type { EventEnvelope, NewEvent } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { startTestServer, type TestServer } from '@bubble/server/testing';

const here = dirname(fileURLToPath(import.meta.url));
export const BIN = join(here, '../../bin/claude-scuba.js');

/** A running `claude-scuba` process with its output. */
export interface ScubaProcess {
  child: ChildProcess;
  /** stdout lines parsed as JSON where they are JSON. */
  readonly logs: Array<Record<string, unknown>>;
  readonly stderr: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * One end-to-end world: the real Bubble server (SQLite in a temp folder),
 * the model double, a human "alice", a bot principal she owns, a thread with
 * both on it, and a config file for the bot in a temp folder.
 */
export interface ScubaWorld {
  server: TestServer;
  double: ModelDouble;
  dir: string;
  alice: BubbleClient;
  aliceToken: string;
  botId: string;
  botToken: string;
  threadId: string;
  configPath: string;
  writeConfig(extra?: Record<string, unknown>, botId?: string): string;
  /**
   * Starts the binary; `asUser` runs it as that Unix user (`setpriv --reuid --regid --init-groups`,
   * so the caller must be root), as a systemd unit's `User=` would.
   */
  startBot(options?: { configPath?: string; env?: Record<string, string>; asUser?: string }): ScubaProcess;
  /** Alice says something: one complete run (run_started, text, run_finished). Returns the envelopes. */
  say(text: string, runId?: string, client?: BubbleClient): Promise<EventEnvelope[]>;
  /** Every event of the thread, read as Alice (or as `client`). */
  events(threadId?: string, client?: BubbleClient): Promise<EventEnvelope[]>;
  /** Polls the thread until `predicate` holds for its events. */
  waitFor(
    predicate: (events: EventEnvelope[]) => boolean,
    options?: { threadId?: string; timeoutMs?: number; what?: string; client?: BubbleClient },
  ): Promise<EventEnvelope[]>;
  close(): Promise<void>;
}

export async function startScubaWorld(options: { script: Script; botId?: string }): Promise<ScubaWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'scuba-e2e-'));
  const server = await startTestServer();
  const double = await startModelDouble({ script: options.script });
  const human = await server.createHuman('alice', 'Alice');
  const aliceToken = human.token.token!;
  const alice = new BubbleClient({ url: server.url, token: aliceToken });
  const botId = options.botId ?? 'bot-research';
  const { token } = await alice.createBot({ principalId: botId, displayName: 'Research bot' });
  const botToken = token.token!;
  const { thread } = await alice.createThread({ title: 'e2e' });
  await alice.addParticipant(thread.threadId, botId, 'member');
  const processes: ScubaProcess[] = [];

  const writeConfig = (extra: Record<string, unknown> = {}, id = botId): string => {
    const path = join(dir, `scuba-${Math.random().toString(36).slice(2, 8)}.json`);
    const config = {
      bubble: { url: server.url, principalId: id, token: { env: 'BOT_TOKEN' } },
      claude: { workspaceRoot: './workspaces', configDir: './claude-home', tools: ['Bash'] },
      store: { path: './state.db' },
      logger: { level: 'debug' },
      ...extra,
    };
    writeFileSync(path, JSON.stringify(config, null, 2));
    return path;
  };
  const configPath = writeConfig();

  const world: ScubaWorld = {
    server,
    double,
    dir,
    alice,
    aliceToken,
    botId,
    botToken,
    threadId: thread.threadId,
    configPath,
    writeConfig,
    startBot(startOptions = {}) {
      const command = [process.execPath, BIN, '--config', startOptions.configPath ?? configPath];
      const asUser = startOptions.asUser;
      const argv =
        asUser === undefined
          ? command
          : ['setpriv', `--reuid=${asUser}`, `--regid=${asUser}`, '--init-groups', '--', ...command];
      const child = spawn(argv[0]!, argv.slice(1), {
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          BOT_TOKEN: botToken,
          ANTHROPIC_API_KEY: 'sk-test-double',
          ANTHROPIC_BASE_URL: double.url,
          ...startOptions.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const logs: Array<Record<string, unknown>> = [];
      const stderr: string[] = [];
      let buffered = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (line.trim() === '') continue;
          try {
            logs.push(JSON.parse(line) as Record<string, unknown>);
          } catch {
            logs.push({ raw: line });
          }
        }
      });
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, signal) => resolve({ code, signal })),
      );
      const proc: ScubaProcess = {
        child,
        logs,
        stderr,
        exited,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          const result = await exited;
          clearTimeout(killer);
          return result;
        },
      };
      processes.push(proc);
      return proc;
    },
    async say(text, runId = `h-${Math.random().toString(36).slice(2, 10)}`, client = alice) {
      const events: NewEvent[] = [
        { type: 'run_started', data: { runId } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't0' } } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't0', delta: text } } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't0' } } },
        { type: 'run_finished', data: { runId, status: 'completed' } },
      ];
      return (await client.appendEvents(thread.threadId, events)).events;
    },
    async events(threadId = thread.threadId, client = alice) {
      const all: EventEnvelope[] = [];
      for (;;) {
        const page = await client.readEvents(threadId, { after: all.at(-1)?.seq ?? 0, limit: 1000 });
        all.push(...page.events);
        if (page.events.length < 1000) return all;
      }
    },
    async waitFor(predicate, waitOptions = {}) {
      const deadline = Date.now() + (waitOptions.timeoutMs ?? 30_000);
      let last: EventEnvelope[] = [];
      while (Date.now() < deadline) {
        last = await world.events(waitOptions.threadId, waitOptions.client);
        if (predicate(last)) return last;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const logs = processes.flatMap((p) => p.logs.slice(-30).map((l) => JSON.stringify(l)));
      throw new Error(
        `timed out waiting for ${waitOptions.what ?? 'a condition'}; events:\n${last.map((e) => `${e.seq} ${e.principalId} ${e.type} ${JSON.stringify(e.data)}`).join('\n')}\nbot logs:\n${logs.join('\n')}\nstderr:\n${processes.flatMap((p) => p.stderr).join('')}`,
      );
    },
    async close() {
      await Promise.all(processes.map((p) => p.stop()));
      alice.close();
      await double.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** The text a principal's run put on the thread, deltas joined. */
export function runText(events: EventEnvelope[], runId: string): string {
  return events
    .filter((e) => e.type === 'message_part' && e.data.runId === runId)
    .map((e) => {
      const chunk = e.data.chunk as { type: string; delta?: string };
      return chunk.type === 'text-delta' ? (chunk.delta ?? '') : '';
    })
    .join('');
}

/** Waits for a log line of the bot that matches, for up to 20 s. */
export async function waitForLog(
  bot: ScubaProcess,
  predicate: (line: Record<string, unknown>) => boolean,
  what: string,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const line = bot.logs.find(predicate);
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `no log line: ${what}\n${bot.logs
      .slice(-20)
      .map((l) => JSON.stringify(l))
      .join('\n')}`,
  );
}
