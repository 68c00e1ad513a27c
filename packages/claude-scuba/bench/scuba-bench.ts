/**
 * `npm run bench:scuba` (run through vitest by scuba.bench-run.ts, so it can use the server's test
 * helpers as TypeScript; none of it is built into dist): claude-scuba's figures beside the raw Agent SDK's,
 * measured in the same run against the same model double (issue 5, "Tests
 * and figures"; issue 19, "A spare engine"). Writes its marked section of the root BENCHMARKS.md.
 * (The growth figures, idle threads by the thousand and a burst of 100, are growth-bench.ts's own section.)
 *
 * - time from a human's append to the bot's first text delta on the thread: warm; cold (a thread's first
 *   turn) with a spare CLI (`limits.spareEngines` 1, the default) and without (0); and a turn that resumes
 *   the session after its CLI was closed for being idle; beside the raw SDK's own push → first delta:
 *   warm, cold (`query()`), `prewarm()` + `claim()` as the reference for a spare, and `query({ resume })`;
 * - HTTP appends for a 2,000-word reply;
 * - resident memory of the bot process per joined idle thread (100 threads).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { prewarm, type SpareProcess } from '@anthropic-ai/claude-agent-sdk';
import { buildChildEnv, liveQueryFrom, narrowSdkMessage, startLiveQuery, type LiveQuery } from '@bubble/engine';
import { startModelDouble, type Script } from '@bubble/model-double';
import type { EventEnvelope, NewEvent } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { startTestServer } from '@bubble/server/testing';
import { resolveConfig } from '../src/config/resolve-config.js';
import { buildClaimPlan, buildQueryOptions, buildSpareOptions } from '../src/session/query-options.js';
import { writeBenchSection } from './benchmarks-md.js';
import { sleep, startBotProcess, type BotProcess, type LogLine } from './bot-process.js';

const COLD_N = Number(process.env.BENCH_COLD_N ?? 5);
const WARM_N = Number(process.env.BENCH_WARM_N ?? 7);
const IDLE_THREADS = Number(process.env.BENCH_IDLE_THREADS ?? 100);
const ESSAY_WORDS = 2_000;
/** The bench bots close a thread's CLI after this much idle time, so the resumed turns come soon. */
const IDLE_CLOSE_SECONDS = 5;

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

/**
 * The raw SDK baseline: the same query options as the bot, in this process.
 * Samples are taken interleaved with the bot's (one raw, one bot), so both
 * see the same load on a shared machine.
 */
async function rawSampler(doubleUrl: string, dir: string) {
  const config = resolveConfig(
    {
      bubble: { url: 'http://127.0.0.1:1', principalId: 'bot-bench', token: 'unused' },
      claude: { tools: ['Bash'], workspaceRoot: './raw-ws', configDir: './raw-claude' },
    },
    { env: { ANTHROPIC_API_KEY: 'sk-bench' }, baseDir: dir, readFile: () => '' },
  );
  if (!config.ok) throw new Error(config.problems.join('; '));
  const scuba = config.config;
  const envWith = (tmp: string) => {
    mkdirSync(tmp, { recursive: true });
    return buildChildEnv({
      path: process.env.PATH ?? '/usr/bin:/bin',
      configDir: join(dir, 'raw-claude'),
      credential: { kind: 'api_key', key: 'sk-bench' },
      baseUrl: doubleUrl,
      maxRetries: 0,
      tmpDir: tmp,
    });
  };
  const isolation = { kind: 'sandbox', privatePaths: [join(dir, 'raw-claude'), join(dir, 'raw-ws')] } as const;
  const canUseTool = async () => ({ behavior: 'allow' }) as const;
  let n = 0;
  const workspace = () => {
    const cwd = join(dir, 'raw-ws', String(n++));
    mkdirSync(cwd, { recursive: true });
    return cwd;
  };
  const drive = (query: LiveQuery) => {
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
  const open = (resume?: { sessionId: string; cwd: string }) => {
    const cwd = resume?.cwd ?? workspace();
    const options = buildQueryOptions({
      config: scuba,
      threadId: `raw-${n}`,
      cwd,
      env: envWith(join(dir, 'raw-tmp', String(n))),
      canUseTool,
      isolation,
      ...(resume ? { resume: resume.sessionId } : {}),
    });
    return { ...drive(startLiveQuery({ options })), cwd };
  };
  const spareTmp = join(dir, 'raw-tmp', 'spare');
  const spareOptions = buildSpareOptions({
    config: scuba,
    env: envWith(spareTmp),
    canUseTool,
    isolation,
    tmpDir: spareTmp,
  });
  const park = () => prewarm({ options: spareOptions });
  let spare: SpareProcess = await park();
  let warmQuery: ReturnType<typeof open> | undefined;
  let resumeFrom: { sessionId: string; cwd: string } | undefined;
  const once = async (q: ReturnType<typeof drive>, text: string, from: number): Promise<number> => {
    const took = await q.turn(text, from);
    q.query.close();
    await q.query.ended;
    return took;
  };
  return {
    /** query() → first delta of a new query. */
    cold: () => once(open(), 'bench hello', performance.now()),
    /** claim() on a parked prewarm() → first delta (the prompt goes with the claim); the next spare is parked after. */
    async claimed(): Promise<number> {
      const started = performance.now();
      const cwd = workspace();
      const plan = buildClaimPlan({ config: scuba, threadId: `raw-${n}`, cwd, isolation, spare: spareOptions });
      if ('refuse' in plan) throw new Error(plan.refuse);
      const parked = spare;
      const query = liveQueryFrom((prompt) => parked.claim({ prompt, options: plan.claim }));
      const took = await once(drive(query), 'bench hello', started);
      spare = await park();
      return took;
    },
    /** query({ resume }) of a session with one turn behind it → first delta. */
    async resumed(): Promise<number> {
      if (resumeFrom === undefined) {
        const first = open();
        await first.turn('bench hello');
        resumeFrom = { sessionId: first.query.sessionId!, cwd: first.cwd };
        first.query.close();
        await first.query.ended;
      }
      return once(open(resumeFrom), 'bench again', performance.now());
    },
    async warm(): Promise<number> {
      if (!warmQuery) {
        warmQuery = open();
        await warmQuery.turn('bench hello');
      }
      return warmQuery.turn('bench again');
    },
    async close(): Promise<void> {
      spare.close();
      warmQuery?.query.close();
      await warmQuery?.query.ended;
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
  const load = loadavg()[0]!.toFixed(2);
  const results: string[] = [];
  try {
    const rawSdk = await rawSampler(double.url, dir);
    const raw = { cold: [] as number[], claimed: [] as number[], resumed: [] as number[], warm: [] as number[] };

    const human = await server.createHuman('alice', 'Alice');
    const alice = new BubbleClient({ url: server.url, token: human.token.token! });
    const bots = ['bot-bench', 'bot-cold', 'bot-mem', 'bot-echo'];
    const tokens: Record<string, string> = {};
    for (const id of bots) tokens[id] = (await alice.createBot({ principalId: id })).token.token!;
    const configFor = (id: string, limits: Record<string, number> = {}) => {
      const path = join(dir, `${id}.json`);
      writeFileSync(
        path,
        JSON.stringify({
          bubble: { url: server.url, principalId: id, token: { env: 'BOT_TOKEN' } },
          claude: { workspaceRoot: `./${id}-ws`, configDir: `./${id}-claude`, tools: ['Bash'], maxRetries: 0 },
          store: { path: `./${id}.db` },
          limits,
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
    const newThread = async (bot: BotProcess, botId: string, title: string) => {
      const { thread } = await alice.createThread({ title });
      await alice.addParticipant(thread.threadId, botId, 'member');
      await bot.waitLog((l) => l.msg === 'thread starts' && l.threadId === thread.threadId);
      return { threadId: thread.threadId, watch: follow(alice, thread.threadId, botId) };
    };
    /** Append → first delta on the thread (ms), waiting for the run to finish. */
    const botTurn = async (thread: { threadId: string; watch: ReturnType<typeof follow> }, text: string) => {
      const asked = performance.now();
      const { events } = await alice.appendEvents(
        thread.threadId,
        say(text, `h-${Math.random().toString(36).slice(2)}`),
      );
      const answer = await thread.watch.answerTo(events[0]!.seq);
      await thread.watch.finishedRun(answer.runId);
      return { ms: answer.firstDeltaAt - asked, runId: answer.runId };
    };

    // Turn latency: the default bot (one spare CLI) and one with spares off, side by side with the raw SDK.
    const limits = { idleQueryTimeoutSeconds: IDLE_CLOSE_SECONDS };
    const bot = startBotProcess(configFor('bot-bench', limits), envFor('bot-bench'));
    const noSpare = startBotProcess(configFor('bot-cold', { ...limits, spareEngines: 0 }), envFor('bot-cold'));
    await bot.waitLog((l) => l.msg === 'claude-scuba running');
    await noSpare.waitLog((l) => l.msg === 'claude-scuba running');
    const parkedCount = () => bot.count((l) => l.msg === 'spare CLI parked');
    const claimedOn = (threadId: string) => (l: LogLine) => l.msg === 'spare CLI claimed' && l.threadId === threadId;
    const cold = { spare: [] as number[], none: [] as number[], resumed: [] as number[] };
    const warm: number[] = [];
    const served = { spare: 0, resumedOwn: 0 };
    const spareThreads: Array<Awaited<ReturnType<typeof newThread>>> = [];
    let appends = 0;
    let parts = 0;
    for (let i = 0; i < COLD_N; i++) {
      const withSpare = await newThread(bot, 'bot-bench', `bench ${i}`);
      const without = await newThread(noSpare, 'bot-cold', `bench cold ${i}`);
      spareThreads.push(withSpare);
      // A spare parked since the last claim (its start is not part of the turn).
      while (parkedCount() < i + 1) await sleep(20);
      await sleep(300);
      raw.cold.push(await rawSdk.cold());
      await sleep(200);
      cold.spare.push((await botTurn(withSpare, 'bench hello')).ms);
      if (bot.count(claimedOn(withSpare.threadId)) > 0) served.spare += 1;
      // The next spare starts a second after the claim: let it park, so its start is in no other sample.
      while (parkedCount() < i + 2) await sleep(20);
      if (i === 0) {
        // Right after its first turn, before its CLI is closed idle.
        for (let j = 0; j < WARM_N; j++) {
          raw.warm.push(await rawSdk.warm());
          warm.push((await botTurn(withSpare, `bench again ${j}`)).ms);
        }
        const essay = await botTurn(withSpare, 'write the essay');
        const line = await bot.waitLog((l) => l.msg === 'run appended' && l.runId === essay.runId);
        appends = Number(line.appends);
        parts = withSpare.watch.parts(essay.runId);
      }
      await sleep(300);
      raw.claimed.push(await rawSdk.claimed());
      await sleep(300);
      cold.none.push((await botTurn(without, 'bench hello')).ms);
      without.watch.stop();
    }
    // Resumed turns: each thread's CLI was closed for being idle; its next turn resumes the session.
    for (const thread of spareThreads) {
      const closed = (l: LogLine) =>
        l.threadId === thread.threadId && String(l.msg).startsWith('query idle; closing it');
      await bot.waitLog(closed, 30_000);
      await sleep(300);
      raw.resumed.push(await rawSdk.resumed());
      cold.resumed.push((await botTurn(thread, 'bench resumed')).ms);
      const opened = bot.logs.filter(
        (l) => l.msg === 'opening the Claude query' && l.threadId === thread.threadId && l.resume !== undefined,
      );
      if (opened.length > 0) served.resumedOwn += 1;
      thread.watch.stop();
    }
    await bot.stop();
    await noSpare.stop();
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
    const row = (figure: string, bot: string, base: string, diff: string, target: string, ok: boolean | undefined) =>
      `| ${figure} | ${bot} | ${base} | ${diff} | ${target} | ${ok === undefined ? '' : ok ? 'met' : '**missed**'} |`;
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    const signed = (x: number) => `${x >= 0 ? '+' : ''}${ms(x)}`;
    const ratio = (a: number[], b: number[]) => median(a) / median(b);
    const warmDiff = median(warm) - median(raw.warm);
    const coldDiff = median(cold.none) - median(raw.cold);
    const resumeDiff = median(cold.resumed) - median(raw.resumed);
    const samples = (name: string, xs: number[]) => `${name} ${xs.map((x) => x.toFixed(0)).join(', ')}`;
    results.push(
      '| figure | claude-scuba | raw SDK, same run | difference | target | |',
      '|---|---:|---:|---:|---|---|',
      row(
        `warm turn: append → first delta on the thread (median of ${warm.length})`,
        ms(median(warm)),
        ms(median(raw.warm)),
        `${signed(warmDiff)} (${ratio(warm, raw.warm).toFixed(2)}x)`,
        'within 30 ms of raw',
        warmDiff <= 30,
      ),
      row(
        `floor: an echo bot's append → its delta on the thread, no Claude (median of ${echoFloor.length})`,
        ms(median(echoFloor)),
        '',
        '',
        'for reading the warm figure',
        undefined,
      ),
      row(
        `cold first turn with a spare CLI (the default, \`spareEngines\` 1): append → first delta (median of ${cold.spare.length}; ${served.spare} served by the spare)`,
        ms(median(cold.spare)),
        `${ms(median(raw.cold))} (\`query()\`)`,
        `${ratio(cold.spare, raw.cold).toFixed(2)}x the raw cold turn`,
        'at most 0.6x the raw cold turn',
        ratio(cold.spare, raw.cold) <= 0.6,
      ),
      row(
        `cold first turn without a spare (\`spareEngines\` 0): append → first delta (median of ${cold.none.length})`,
        ms(median(cold.none)),
        ms(median(raw.cold)),
        `${signed(coldDiff)} (${ratio(cold.none, raw.cold).toFixed(2)}x)`,
        'within 150 ms of raw',
        coldDiff <= 150,
      ),
      row(
        `reference: the raw SDK's \`prewarm()\` + \`claim()\` → first delta (median of ${raw.claimed.length})`,
        '',
        ms(median(raw.claimed)),
        `${ratio(raw.claimed, raw.cold).toFixed(2)}x the raw cold turn`,
        'what a spare can give at best',
        undefined,
      ),
      row(
        `resumed turn after the CLI was closed idle: append → first delta (median of ${cold.resumed.length}; ${served.resumedOwn} on a CLI of its own)`,
        ms(median(cold.resumed)),
        `${ms(median(raw.resumed))} (\`query({ resume })\`)`,
        `${signed(resumeDiff)} (${ratio(cold.resumed, raw.resumed).toFixed(2)}x; ${ratio(cold.resumed, raw.cold).toFixed(2)}x the raw cold turn)`,
        'none: a spare cannot resume',
        undefined,
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
        // Threads joined while the bot runs: each joining wakes its session, which sleeps only after
        // `idleStateSeconds`; idle threads asleep are the growth bench's figure (growth-bench.ts).
        `resident memory per thread just joined, its session still awake (${joined} threads)`,
        `${perThreadKiB.toFixed(0)} KiB`,
        `${(rss0 / 1024).toFixed(1)} MiB with no thread`,
        `${((rss100 - rss0) / 1024).toFixed(1)} MiB for all`,
        'under 1 MiB',
        perThreadKiB < 1024,
      ),
      '',
      `Warm turn minus the raw SDK minus the floor (what claude-scuba itself adds): ${ms(median(warm) - median(raw.warm) - median(echoFloor))}.`,
      '',
      `Samples (ms), in the order taken (one raw, then one bot): ${[
        samples('echo floor', echoFloor),
        samples('warm', warm),
        samples('raw warm', raw.warm),
        samples('cold with a spare', cold.spare),
        samples('cold without', cold.none),
        samples('raw cold', raw.cold),
        samples('raw prewarm + claim', raw.claimed),
        samples('resumed', cold.resumed),
        samples('raw resume', raw.resumed),
      ].join('; ')}.`,
    );
  } finally {
    await double.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const section = [
    '## claude-scuba',
    '',
    `Written by \`npm run bench:scuba\` (packages/claude-scuba/bench/scuba-bench.ts) on ${new Date().toISOString()}, ${cpus().length} CPUs, Node ${process.version}; load average (1 min) ${load} at the start, ${loadavg()[0]!.toFixed(2)} at the end.`,
    'The bot is the real `claude-scuba` process with the real CLI; the raw SDK baseline runs the same query options in the bench process,',
    "its samples interleaved with the bot's (one raw, then one bot) so both see the same load;",
    'both talk to the same model double on loopback in the same run. Bot latency is measured by a WebSocket subscriber from the HTTP append',
    "of a human's message to the arrival of the bot's first text-delta event; raw latency from push (cold: from `query()`, `claim()`",
    "or `query({ resume })`) to the first text_delta stream event. A bot cold turn is a new thread's first message, taken once the",
    "bot's next spare has parked; the raw `claim()` sends its prompt with the claim, on a spare parked before it. A resumed turn is the",
    `next message on one of those threads after the bot closed its idle CLI (\`idleQueryTimeoutSeconds\` ${IDLE_CLOSE_SECONDS} in this bench): a`,
    'spare cannot resume a session, so it starts a CLI of its own, as the raw `query({ resume })` does.',
    '',
    ...results,
    '',
  ].join('\n');
  process.stdout.write(`${section}\n`);
  writeBenchSection('scuba', section);
}
