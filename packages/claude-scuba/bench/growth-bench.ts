/**
 * The growth figures of `npm run bench:scuba` (issue 19): what joined idle threads cost the bot
 * (boot time and resident memory with 100, 1,000 and 10,000 of them), and how long 100 threads
 * written to at once wait for their first words under `maxActiveQueries` 8, beside the raw SDK
 * running the same 100 cold queries 8 at a time in this process.
 *
 * Each size is measured on a restart: the threads were joined and read to their head by an
 * earlier run of the same bot (its checkpoints and session table in the same state file), as a
 * bot that lives in them would restart. The server is the real one with its default limits.
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { buildChildEnv, narrowSdkMessage, startLiveQuery } from '@bubble/engine';
import type { EventEnvelope } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { startTestServer, type TestServer } from '@bubble/server/testing';
import { resolveConfig } from '../src/config/resolve-config.js';
import { buildQueryOptions } from '../src/session/query-options.js';
import { sleep, startBotProcess, type BotProcess } from './bot-process.js';

const SIZES = (process.env.BENCH_GROWTH_SIZES ?? '100,1000,10000').split(',').map(Number);
const BURST = Number(process.env.BENCH_BURST_THREADS ?? 100);
const BURST_SLOTS = 8;
/** How long a bot sits after its boot before its memory is read (V8 gives back what boot left over). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 15_000);
const MAKERS = 8;
/** Where to write a heap snapshot of each measured bot (after its memory is read); none by default. */
const HEAP_DIR = process.env.BENCH_HEAP_DIR;
const BOT = 'bot-grow';

interface World {
  server: TestServer;
  makers: BubbleClient[];
  threads: Array<{ threadId: string; maker: BubbleClient }>;
  configPath: string;
  statePath: string;
  env: Record<string, string>;
}

async function setUp(dir: string, doubleUrl: string): Promise<World> {
  const server = await startTestServer();
  const owner = await server.createHuman('grow-owner', 'Owner');
  const asOwner = new BubbleClient({ url: server.url, token: owner.token.token! });
  const token = (await asOwner.createBot({ principalId: BOT })).token.token!;
  // Thread makers of their own (each with its own request budget) add the bot to their threads.
  await asOwner.updatePrincipal(BOT, { joinableBy: 'anyone' });
  asOwner.close();
  const makers: BubbleClient[] = [];
  for (let i = 0; i < MAKERS; i++) {
    const human = await server.createHuman(`maker-${i}`, `Maker ${i}`);
    makers.push(new BubbleClient({ url: server.url, token: human.token.token!, maxConcurrentRequests: 16 }));
  }
  const statePath = join(dir, `${BOT}.db`);
  const configPath = join(dir, `${BOT}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      bubble: { url: server.url, principalId: BOT, token: { env: 'BOT_TOKEN' } },
      claude: { workspaceRoot: `./${BOT}-ws`, configDir: `./${BOT}-claude`, tools: ['Bash'], maxRetries: 0 },
      store: { path: statePath },
      limits: { maxActiveQueries: BURST_SLOTS, idleStateSeconds: 5 },
      logger: { level: 'info' },
    }),
  );
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    BOT_TOKEN: token,
    ANTHROPIC_API_KEY: 'sk-bench',
    ANTHROPIC_BASE_URL: doubleUrl,
  };
  return { server, makers, threads: [], configPath, statePath, env };
}

/** Threads made by the makers in parallel, each with the bot added, up to `size` in all. */
async function growTo(world: World, size: number): Promise<void> {
  const start = world.threads.length;
  const made = await Promise.all(
    world.makers.map(async (maker, m) => {
      const mine: World['threads'] = [];
      for (let i = start + m; i < size; i += MAKERS) {
        const { thread } = await maker.createThread({ title: `idle ${i}` });
        await maker.addParticipant(thread.threadId, BOT, 'member');
        mine.push({ threadId: thread.threadId, maker });
      }
      return mine;
    }),
  );
  world.threads.push(...made.flat());
}

/** Threads the bot has read to their head, and threads it holds a session of, in its state file. */
function settledCounts(world: World): { settled: number; awake: number } {
  const db = new Database(world.statePath, { readonly: true, fileMustExist: true });
  try {
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      settled: count('SELECT count(*) AS n FROM bubble_checkpoints WHERE seq >= 2'),
      awake: count('SELECT count(*) AS n FROM scuba_awake_threads'),
    };
  } catch {
    return { settled: 0, awake: -1 };
  } finally {
    db.close();
  }
}

/** Whether the bot has read every thread to its head and holds no session (what a restart finds). */
function allSettledAsleep(world: World): boolean {
  const { settled, awake } = settledCounts(world);
  return settled >= world.threads.length && awake === 0;
}

const following = (l: Record<string, unknown>) => l.msg === 'following every thread';

/** Starts the bot and times it to "following every thread"; reads its memory after it has sat a while. */
async function boot(
  world: World,
  nodeArgs: string[] = [],
): Promise<{ bot: BotProcess; bootMs: number; threads: number }> {
  const started = performance.now();
  const bot = startBotProcess(world.configPath, world.env, nodeArgs);
  let bootMs = 0;
  const line = await (async () => {
    const deadline = Date.now() + 300_000;
    for (;;) {
      const found = bot.logs.find(following);
      if (found) {
        bootMs = performance.now() - started;
        return found;
      }
      if (Date.now() > deadline || bot.child.exitCode !== null) {
        const complaints = bot.logs.filter((l) => Number(l.level) >= 40).slice(-20);
        process.stdout.write(`${complaints.map((l) => JSON.stringify(l)).join('\n')}\n`);
        throw new Error(`the bot never followed its threads (exit ${bot.child.exitCode})`);
      }
      await sleep(5);
    }
  })();
  return { bot, bootMs, threads: Number(line.threads) };
}

/** Asks the bot for a heap snapshot (`--heapsnapshot-signal`) and waits until it is written. */
async function heapSnapshot(bot: BotProcess, size: number): Promise<void> {
  const before = new Set(readdirSync(HEAP_DIR!));
  bot.child.kill('SIGUSR2');
  const deadline = Date.now() + 120_000;
  let lastSize = -1;
  while (Date.now() < deadline) {
    await sleep(1_000);
    const made = readdirSync(HEAP_DIR!).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (made.length === 0) continue;
    const path = join(HEAP_DIR!, made[0]!);
    // Written once its size holds still for a second.
    const now = statSync(path).size;
    if (now > 0 && now === lastSize) {
      process.stdout.write(`growth: heap snapshot of the bot with ${size} threads: ${path}\n`);
      return;
    }
    lastSize = now;
  }
  throw new Error('no heap snapshot came');
}

/** The raw SDK's 100 cold queries, 8 at a time: from the start to the last first delta. */
async function rawBurst(doubleUrl: string, dir: string): Promise<number> {
  const config = resolveConfig(
    { bubble: { url: 'http://127.0.0.1:1', principalId: BOT, token: 'unused' }, claude: { tools: ['Bash'] } },
    { env: { ANTHROPIC_API_KEY: 'sk-bench' }, baseDir: dir, readFile: () => '' },
  );
  if (!config.ok) throw new Error(config.problems.join('; '));
  const env = buildChildEnv({
    path: process.env.PATH ?? '/usr/bin:/bin',
    configDir: join(dir, 'raw-burst-claude'),
    credential: { kind: 'api_key', key: 'sk-bench' },
    baseUrl: doubleUrl,
    maxRetries: 0,
  });
  const started = performance.now();
  let next = 0;
  let last = 0;
  const lane = async () => {
    for (let n = next++; n < BURST; n = next++) {
      const cwd = join(dir, 'raw-burst-ws', String(n));
      mkdirSync(cwd, { recursive: true });
      const query = startLiveQuery({
        options: buildQueryOptions({
          config: config.config,
          threadId: `raw-burst-${n}`,
          cwd,
          env,
          canUseTool: async () => ({ behavior: 'allow' }),
          isolation: { kind: 'sandbox', privatePaths: [join(dir, 'raw-burst-claude')] },
        }),
      });
      query.push('bench hello');
      let delta = false;
      for await (const message of query.messages) {
        const narrowed = narrowSdkMessage(message);
        if (!delta && narrowed.kind === 'stream_event' && narrowed.message.event.delta?.type === 'text_delta') {
          delta = true;
          last = Math.max(last, performance.now() - started);
        }
        if (message.type === 'result') break;
      }
      query.close();
      await query.ended;
    }
  };
  await Promise.all(Array.from({ length: BURST_SLOTS }, lane));
  return last;
}

/** One human message in each of the first `BURST` threads at once; the time to the bot's last first delta. */
async function botBurst(world: World): Promise<number> {
  const threads = world.threads.slice(0, BURST);
  const controller = new AbortController();
  const firstDelta = new Map<string, number>();
  let started = 0;
  const heads = await Promise.all(threads.map((t) => t.maker.getThread(t.threadId)));
  threads.forEach((t, i) => {
    void (async () => {
      for await (const event of t.maker.subscribeThread(t.threadId, {
        afterSeq: heads[i]!.headSeq,
        signal: controller.signal,
      }) as AsyncIterable<EventEnvelope>) {
        if (event.principalId !== BOT || event.type !== 'message_part') continue;
        if ((event.data.chunk as { type: string }).type === 'text-delta' && !firstDelta.has(t.threadId))
          firstDelta.set(t.threadId, performance.now() - started);
      }
    })().catch(() => undefined);
  });
  await sleep(1_000);
  started = performance.now();
  await Promise.all(
    threads.map((t, i) =>
      t.maker.appendEvents(t.threadId, [
        { type: 'run_started', data: { runId: `burst-${i}` } },
        { type: 'message_part', data: { runId: `burst-${i}`, chunk: { type: 'text-delta', id: 't', delta: 'hello' } } },
        { type: 'run_finished', data: { runId: `burst-${i}`, status: 'completed' } },
      ]),
    ),
  );
  const deadline = Date.now() + 300_000;
  while (firstDelta.size < threads.length && Date.now() < deadline) await sleep(20);
  controller.abort();
  if (firstDelta.size < threads.length)
    throw new Error(`only ${firstDelta.size} of ${threads.length} threads answered`);
  return Math.max(...firstDelta.values());
}

/** Runs the growth figures; returns the lines of their part of the bench:scuba section. */
export async function runGrowthBench(doubleUrl: string, dir: string): Promise<string[]> {
  const world = await setUp(dir, doubleUrl);
  const rows: string[] = [];
  try {
    // The bot with no thread: the base every size is read against.
    const empty = await boot(world, HEAP_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_DIR}`] : []);
    await sleep(SETTLE_MS);
    const rss0 = empty.bot.rssKb();
    if (HEAP_DIR) await heapSnapshot(empty.bot, 0);
    await empty.bot.stop();
    rows.push(
      '| joined idle threads | boot: start → following every thread | resident memory | per thread beyond the bot with none | target | |',
      '|---:|---:|---:|---:|---|---|',
      `| 0 | ${(empty.bootMs / 1000).toFixed(2)} s | ${(rss0 / 1024).toFixed(1)} MiB | (baseline) | | |`,
    );
    let burstThreadsReady = false;
    for (const size of SIZES) {
      const madeAt = performance.now();
      await growTo(world, size);
      process.stdout.write(`growth: ${size} threads made in ${((performance.now() - madeAt) / 1000).toFixed(1)} s\n`);
      // The first start after the new threads: the bot joins them (a session each, its own joining
      // wakes it) and reads them to their head; then every session falls asleep.
      const firstAt = performance.now();
      const first = { bot: startBotProcess(world.configPath, world.env) };
      const deadline = Date.now() + Number(process.env.BENCH_SETTLE_DEADLINE_MS ?? 1_200_000);
      let shown = Date.now();
      while (!allSettledAsleep(world) && Date.now() < deadline && first.bot.child.exitCode === null) {
        await sleep(500);
        if (Date.now() - shown > 30_000) {
          shown = Date.now();
          process.stdout.write(`growth: first start with ${size}: ${JSON.stringify(settledCounts(world))}\n`);
        }
      }
      process.stdout.write(
        `growth: the first start read ${size} threads and let them sleep in ${((performance.now() - firstAt) / 1000).toFixed(1)} s\n`,
      );
      await first.bot.stop();
      if (!allSettledAsleep(world)) {
        const complaints = first.bot.logs.filter((l) => Number(l.level) >= 40).slice(-20);
        process.stdout.write(`${complaints.map((l) => JSON.stringify(l)).join('\n')}\n`);
        throw new Error(`the bot did not settle its ${size} threads: ${JSON.stringify(settledCounts(world))}`);
      }
      // What is measured: a restart with every thread idle.
      const measured = await boot(
        world,
        HEAP_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_DIR}`] : [],
      );
      await sleep(SETTLE_MS);
      const rss = measured.bot.rssKb();
      if (HEAP_DIR) await heapSnapshot(measured.bot, size);
      const perThread = (rss - rss0) / size;
      rows.push(
        `| ${size.toLocaleString('en-US')} | ${(measured.bootMs / 1000).toFixed(2)} s (${measured.threads.toLocaleString('en-US')} followed; ${(measured.bootMs / empty.bootMs).toFixed(1)}x the bot with none) | ${(rss / 1024).toFixed(1)} MiB | ${perThread.toFixed(1)} KiB | ≤ 64 KiB per thread${size === 10_000 ? '; boot ≤ 15 s' : ''} | ${perThread <= 64 && (size !== 10_000 || measured.bootMs <= 15_000) ? 'met' : '**missed**'} |`,
      );
      if (!burstThreadsReady && size >= BURST) {
        burstThreadsReady = true;
        const raw = await rawBurst(doubleUrl, dir);
        const bot = await botBurst(world);
        rows.push(
          '',
          `| ${BURST} threads written to at once, maxActiveQueries ${BURST_SLOTS} | claude-scuba | raw SDK, ${BURST} cold queries ${BURST_SLOTS} at a time | ratio |`,
          '|---|---:|---:|---:|',
          `| first message → the last thread's first delta | ${(bot / 1000).toFixed(2)} s | ${(raw / 1000).toFixed(2)} s | ${(bot / raw).toFixed(2)}x |`,
          '',
        );
      }
      await measured.bot.stop();
    }
  } finally {
    for (const maker of world.makers) maker.close();
    await world.server.stop();
  }
  return rows;
}
