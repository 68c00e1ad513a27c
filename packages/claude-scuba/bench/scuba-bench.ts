/**
 * `npm run bench:scuba` (run through vitest by scuba.bench-run.ts, so it can use the server's test
 * helpers as TypeScript; none of it is built into dist): claude-scuba's figures beside the raw Agent SDK's,
 * measured in the same run against the same model double (issue 5, "Tests
 * and figures"). Writes its marked section of the root BENCHMARKS.md.
 *
 * - time from a human's append to the bot's first text delta on the thread,
 *   cold (first turn of a thread: the CLI starts) and warm, beside the raw
 *   SDK's own push → first delta, cold (query() start) and warm;
 * - HTTP appends for a 2,000-word reply;
 * - resident memory of the bot process per joined idle thread (100 threads).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildChildEnv, narrowSdkMessage, startLiveQuery } from '@bubble/engine';
import { startModelDouble, type Script } from '@bubble/model-double';
import type { EventEnvelope, NewEvent } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { startTestServer } from '@bubble/server/testing';
import { resolveConfig } from '../src/config/resolve-config.js';
import { buildQueryOptions } from '../src/session/query-options.js';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');
const BIN = join(pkg, 'bin/claude-scuba.js');
const COLD_N = Number(process.env.BENCH_COLD_N ?? 3);
const WARM_N = Number(process.env.BENCH_WARM_N ?? 7);
const IDLE_THREADS = Number(process.env.BENCH_IDLE_THREADS ?? 100);
const ESSAY_WORDS = 2_000;

const script: Script = [
  {
    name: 'essay',
    match: { text: 'write the essay' },
    reply: [{ type: 'text', text: Array.from({ length: ESSAY_WORDS }, (_, i) => `word${i}`).join(' ') }],
    times: 'always',
  },
  { name: 'short', reply: [{ type: 'text', text: 'Short answer here.' }], times: 'always' },
];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The raw SDK baseline: the same query options as the bot, in this process.
 * Samples are taken interleaved with the bot's (one raw, one bot), so both
 * see the same load on a shared machine.
 */
async function rawSampler(doubleUrl: string, dir: string) {
  const config = resolveConfig(
    { bubble: { url: 'http://127.0.0.1:1', principalId: 'bot-bench', token: 'unused' }, claude: { tools: ['Bash'] } },
    { env: { ANTHROPIC_API_KEY: 'sk-bench' }, baseDir: dir, readFile: () => '' },
  );
  if (!config.ok) throw new Error(config.problems.join('; '));
  const env = buildChildEnv({
    path: process.env.PATH ?? '/usr/bin:/bin',
    configDir: join(dir, 'raw-claude'),
    credential: { kind: 'api_key', key: 'sk-bench' },
    baseUrl: doubleUrl,
    maxRetries: 0,
  });
  let n = 0;
  const open = () => {
    const cwd = join(dir, 'raw-ws', String(n++));
    mkdirSync(cwd, { recursive: true });
    const options = buildQueryOptions({
      config: config.config,
      threadId: `raw-${n}`,
      cwd,
      env,
      canUseTool: async () => ({ behavior: 'allow' }),
      isolation: { kind: 'sandbox', privatePaths: [join(dir, 'raw-claude')] },
    });
    const query = startLiveQuery({ options });
    const messages = query.messages[Symbol.asyncIterator]();
    const until = async (done: (m: { type: string }) => boolean): Promise<void> => {
      for (;;) {
        const next = await messages.next();
        if (next.done) throw new Error('the raw query ended early');
        if (done(next.value)) return;
      }
    };
    const isDelta = (m: unknown) => {
      const narrowed = narrowSdkMessage(m);
      return narrowed.kind === 'stream_event' && narrowed.message.event.delta?.type === 'text_delta';
    };
    /** Push → first delta (ms); waits for the result before returning. */
    const turn = async (text: string, from = performance.now()): Promise<number> => {
      query.push(text);
      await until(isDelta);
      const took = performance.now() - from;
      await until((m) => m.type === 'result');
      return took;
    };
    return { query, turn };
  };
  let warmQuery: ReturnType<typeof open> | undefined;
  return {
    /** query() → first delta of a new query. */
    async cold(): Promise<number> {
      const started = performance.now();
      const q = open();
      const took = await q.turn('bench hello', started);
      q.query.close();
      await q.query.ended;
      return took;
    },
    async warm(): Promise<number> {
      if (!warmQuery) {
        warmQuery = open();
        await warmQuery.turn('bench hello');
      }
      return warmQuery.turn('bench again');
    },
    async close(): Promise<void> {
      warmQuery?.query.close();
      await warmQuery?.query.ended;
    },
  };
}

interface BotProcess {
  child: ChildProcess;
  logs: Array<Record<string, unknown>>;
  waitLog(predicate: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  count(predicate: (l: Record<string, unknown>) => boolean): number;
  rssKb(): number;
  stop(): Promise<void>;
}

function startBotProcess(configPath: string, env: Record<string, string>): BotProcess {
  const child = spawn(process.execPath, [BIN, '--config', configPath], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const logs: Array<Record<string, unknown>> = [];
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* not JSON */
      }
    }
  });
  return {
    child,
    logs,
    async waitLog(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const line = logs.find(predicate);
        if (line) return line;
        await sleep(20);
      }
      throw new Error('timed out waiting for a bot log line');
    },
    count: (predicate) => logs.filter(predicate).length,
    rssKb() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** Follows a thread over the WebSocket, timestamping the first text delta of each bot run. */
function follow(client: BubbleClient, threadId: string, botId: string) {
  const firstDelta = new Map<string, number>();
  const replyTo = new Map<number, string>();
  const finished = new Set<string>();
  const parts = new Map<string, number>();
  const controller = new AbortController();
  void (async () => {
    for await (const event of client.subscribeThread(threadId, {
      afterSeq: 0,
      signal: controller.signal,
    }) as AsyncIterable<EventEnvelope>) {
      if (event.principalId !== botId) continue;
      const runId = String(event.data.runId);
      if (event.type === 'run_started')
        for (const seq of (event.data.replyTo as number[] | undefined) ?? []) replyTo.set(seq, runId);
      if (event.type === 'message_part') {
        parts.set(runId, (parts.get(runId) ?? 0) + 1);
        if ((event.data.chunk as { type: string }).type === 'text-delta' && !firstDelta.has(runId))
          firstDelta.set(runId, performance.now());
      }
      if (event.type === 'run_finished') finished.add(runId);
    }
  })().catch(() => undefined);
  return {
    async answerTo(seq: number, timeoutMs = 60_000): Promise<{ runId: string; firstDeltaAt: number }> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const runId = replyTo.get(seq);
        if (runId && firstDelta.has(runId)) return { runId, firstDeltaAt: firstDelta.get(runId)! };
        await sleep(1);
      }
      throw new Error(`no answer to seq ${seq}`);
    },
    async finishedRun(runId: string): Promise<void> {
      while (!finished.has(runId)) await sleep(5);
    },
    parts: (runId: string) => parts.get(runId) ?? 0,
    stop: () => controller.abort(),
  };
}

const say = (text: string, runId: string): NewEvent[] => [
  { type: 'run_started', data: { runId } },
  { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
  { type: 'run_finished', data: { runId, status: 'completed' } },
];

/** Runs every figure and writes the `bench:scuba` section of the root BENCHMARKS.md. */
export async function runScubaBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'scuba-bench-'));
  const server = await startTestServer();
  const double = await startModelDouble({ script });
  const results: string[] = [];
  try {
    const rawSdk = await rawSampler(double.url, dir);
    const raw = { cold: [] as number[], warm: [] as number[] };

    const human = await server.createHuman('alice', 'Alice');
    const alice = new BubbleClient({ url: server.url, token: human.token.token! });
    const bots = ['bot-bench', 'bot-mem', 'bot-echo'];
    const tokens: Record<string, string> = {};
    for (const id of bots) tokens[id] = (await alice.createBot({ principalId: id })).token.token!;
    const configFor = (id: string) => {
      const path = join(dir, `${id}.json`);
      writeFileSync(
        path,
        JSON.stringify({
          bubble: { url: server.url, principalId: id, token: { env: 'BOT_TOKEN' } },
          claude: { workspaceRoot: `./${id}-ws`, configDir: `./${id}-claude`, tools: ['Bash'], maxRetries: 0 },
          store: { path: `./${id}.db` },
          logger: { level: 'info' },
        }),
      );
      return path;
    };
    const envFor = (id: string) => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      BOT_TOKEN: tokens[id]!,
      ANTHROPIC_API_KEY: 'sk-bench',
      ANTHROPIC_BASE_URL: double.url,
    });

    // Turn latency and appends.
    const bot = startBotProcess(configFor('bot-bench'), envFor('bot-bench'));
    await bot.waitLog((l) => l.msg === 'claude-scuba running');
    const cold: number[] = [];
    const warm: number[] = [];
    let appends = 0;
    let parts = 0;
    for (let i = 0; i < COLD_N; i++) {
      const { thread } = await alice.createThread({ title: `bench ${i}` });
      await alice.addParticipant(thread.threadId, 'bot-bench', 'member');
      await bot.waitLog((l) => l.msg === 'thread starts' && l.threadId === thread.threadId);
      const watch = follow(alice, thread.threadId, 'bot-bench');
      await sleep(200);
      raw.cold.push(await rawSdk.cold());
      const asked = performance.now();
      const { events } = await alice.appendEvents(thread.threadId, say('bench hello', `c${i}`));
      const answer = await watch.answerTo(events[0]!.seq);
      cold.push(answer.firstDeltaAt - asked);
      await watch.finishedRun(answer.runId);
      if (i === 0) {
        for (let j = 0; j < WARM_N; j++) {
          raw.warm.push(await rawSdk.warm());
          const pushed = performance.now();
          const appended = await alice.appendEvents(thread.threadId, say(`bench again ${j}`, `w${j}`));
          const next = await watch.answerTo(appended.events[0]!.seq);
          warm.push(next.firstDeltaAt - pushed);
          await watch.finishedRun(next.runId);
        }
        const essay = await alice.appendEvents(thread.threadId, say('write the essay', 'essay'));
        const long = await watch.answerTo(essay.events[0]!.seq);
        await watch.finishedRun(long.runId);
        const line = await bot.waitLog((l) => l.msg === 'run appended' && l.runId === long.runId);
        appends = Number(line.appends);
        parts = watch.parts(long.runId);
      }
      watch.stop();
    }
    await bot.stop();
    await rawSdk.close();

    // The floor the server sets: a bot that appends a delta the moment it sees a message (two appends, two fan-outs, no Claude).
    const echoFloor: number[] = [];
    {
      const { thread } = await alice.createThread({ title: 'echo floor' });
      await alice.addParticipant(thread.threadId, 'bot-echo', 'member');
      const echo = new BubbleClient({ url: server.url, token: tokens['bot-echo']! });
      const controller = new AbortController();
      let echoes = 0;
      void (async () => {
        for await (const event of echo.subscribeThread(thread.threadId, {
          afterSeq: 0,
          signal: controller.signal,
        }) as AsyncIterable<EventEnvelope>) {
          if (event.principalId !== 'alice' || event.type !== 'run_finished') continue;
          const runId = `echo-${echoes++}`;
          await echo.appendEvents(thread.threadId, [
            { type: 'run_started', data: { runId, replyTo: [event.seq] } },
            { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: 'echo' } } },
            { type: 'run_finished', data: { runId, status: 'completed' } },
          ]);
        }
      })().catch(() => undefined);
      const watch = follow(alice, thread.threadId, 'bot-echo');
      await sleep(300);
      for (let j = 0; j < WARM_N; j++) {
        const asked = performance.now();
        const { events } = await alice.appendEvents(thread.threadId, say(`echo ${j}`, `e${j}`));
        const answer = await watch.answerTo(events.at(-1)!.seq);
        echoFloor.push(answer.firstDeltaAt - asked);
        await watch.finishedRun(answer.runId);
      }
      watch.stop();
      controller.abort();
      echo.close();
    }

    // Memory per joined idle thread, in a fresh bot process.
    const mem = startBotProcess(configFor('bot-mem'), envFor('bot-mem'));
    await mem.waitLog((l) => l.msg === 'claude-scuba running');
    await sleep(2_000);
    const rss0 = mem.rssKb();
    for (let i = 0; i < IDLE_THREADS; i++) {
      const { thread } = await alice.createThread({ title: `idle ${i}` });
      await alice.addParticipant(thread.threadId, 'bot-mem', 'member');
    }
    const deadline = Date.now() + 120_000;
    while (mem.count((l) => l.msg === 'thread starts') < IDLE_THREADS && Date.now() < deadline) await sleep(100);
    const joined = mem.count((l) => l.msg === 'thread starts');
    await sleep(3_000);
    const rss100 = mem.rssKb();
    await mem.stop();
    alice.close();

    const perThreadKiB = (rss100 - rss0) / joined;
    const row = (figure: string, bot: string, base: string, diff: string, target: string, ok: boolean) =>
      `| ${figure} | ${bot} | ${base} | ${diff} | ${target} | ${ok ? 'met' : '**missed**'} |`;
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    const warmDiff = median(warm) - median(raw.warm);
    const coldDiff = median(cold) - median(raw.cold);
    results.push(
      '| figure | claude-scuba | raw SDK, same run | difference | target | |',
      '|---|---:|---:|---:|---|---|',
      row(
        `warm turn: append → first delta on the thread (median of ${warm.length})`,
        ms(median(warm)),
        ms(median(raw.warm)),
        `${warmDiff >= 0 ? '+' : ''}${ms(warmDiff)} (${(median(warm) / median(raw.warm)).toFixed(2)}x)`,
        'within 30 ms of raw',
        warmDiff <= 30,
      ),
      row(
        `floor: an echo bot's append → its delta on the thread, no Claude (median of ${echoFloor.length})`,
        ms(median(echoFloor)),
        '',
        '',
        'for reading the warm figure',
        true,
      ),
      row(
        `cold first turn: append → first delta (median of ${cold.length})`,
        ms(median(cold)),
        ms(median(raw.cold)),
        `${coldDiff >= 0 ? '+' : ''}${ms(coldDiff)} (${(median(cold) / median(raw.cold)).toFixed(2)}x)`,
        'within 150 ms of raw',
        coldDiff <= 150,
      ),
      row(
        `appends for a ${ESSAY_WORDS.toLocaleString('en-US')}-word reply`,
        `${appends} appends (${parts} message parts)`,
        `${ESSAY_WORDS} deltas from the SDK`,
        '',
        'under 30',
        appends < 30,
      ),
      row(
        `resident memory per joined idle thread (${joined} threads)`,
        `${perThreadKiB.toFixed(0)} KiB`,
        `${(rss0 / 1024).toFixed(1)} MiB with no thread`,
        `${((rss100 - rss0) / 1024).toFixed(1)} MiB for all`,
        'under 1 MiB',
        perThreadKiB < 1024,
      ),
      '',
      `Warm turn minus the raw SDK minus the floor (what claude-scuba itself adds): ${ms(median(warm) - median(raw.warm) - median(echoFloor))}.`,
      '',
      `Samples (ms): echo floor ${echoFloor.map((x) => x.toFixed(0)).join(', ')}; warm ${warm.map((x) => x.toFixed(0)).join(', ')}; raw warm ${raw.warm.map((x) => x.toFixed(0)).join(', ')}; cold ${cold.map((x) => x.toFixed(0)).join(', ')}; raw cold ${raw.cold.map((x) => x.toFixed(0)).join(', ')}.`,
    );
  } finally {
    await double.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const section = [
    '## claude-scuba',
    '',
    `Written by \`npm run bench:scuba\` (packages/claude-scuba/bench/scuba-bench.ts) on ${new Date().toISOString()}, ${cpus().length} CPUs, Node ${process.version}.`,
    'The bot is the real `claude-scuba` process with the real CLI; the raw SDK baseline runs the same query options in the bench process,',
    "its samples interleaved with the bot's (one raw, then one bot) so both see the same load;",
    'both talk to the same model double on loopback in the same run. Bot latency is measured by a WebSocket subscriber from the HTTP append',
    "of a human's message to the arrival of the bot's first text-delta event; raw latency from push (cold: from query()) to the first",
    'text_delta stream event.',
    '',
    ...results,
    '',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  // The root BENCHMARKS.md is shared: bench:server owns its top and keeps the sections other benches mark.
  const root = join(pkg, '../../BENCHMARKS.md');
  const begin = '<!-- bench:scuba -->';
  const end = '<!-- /bench:scuba -->';
  const marked = `${begin}\n${section}${end}\n`;
  const current = existsSync(root) ? readFileSync(root, 'utf8') : '# Benchmarks\n\n';
  const at = current.indexOf(begin);
  const next =
    at === -1
      ? `${current.trimEnd()}\n\n${marked}`
      : `${current.slice(0, at)}${marked}${current.slice(current.indexOf(end) + end.length + 1)}`;
  writeFileSync(root, next);
}
