/**
 * `npm run bench:discord`: the time from a mention to the bot's first reply
 * text in Discord (the first message of the reply, then its first edit),
 * beside the raw SDK's first text delta for the same query options, measured
 * in the same run against the same model double, samples interleaved (one raw,
 * then one bot) so both see the same load on this shared machine. Writes its
 * marked section of the root BENCHMARKS.md.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildChildEnv, startLiveQuery } from '@bubble/engine';
import { expect, it } from 'vitest';
import { DEFAULT_EDIT_INTERVAL_MS } from '../src/reply/reply-stream.js';
import { buildTurnOptions } from '../src/runs/turn-options.js';
import { ALICE, ALICE_TOKEN, startHarness } from '../test/support/harness.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 7);
const REPLY = 'Here is a streamed answer of a dozen words for the latency bench, one word per delta.';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

it('mention to first reply text, beside the raw SDK', async () => {
  const started = Date.now();
  const h = await startHarness({
    editIntervalMs: DEFAULT_EDIT_INTERVAL_MS,
    script: [{ reply: [{ type: 'text', text: REPLY, chunkWords: 1, delayMs: 20 }], times: 'always' }],
  });
  const rawDir = await mkdtemp(join(tmpdir(), 'bubble-discord-bench-raw-'));
  try {
    await h.link(ALICE, ALICE_TOKEN);
    const bot: number[] = [];
    const botEdit: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      // Raw SDK: the chat turn's own options, a new CLI per turn (as the bot runs it), query() to the first text delta.
      const env = buildChildEnv({
        path: process.env.PATH ?? '/usr/bin:/bin',
        configDir: join(rawDir, 'claude'),
        tmpDir: join(rawDir, 'tmp'),
        credential: { kind: 'oauth', token: ALICE_TOKEN },
        baseUrl: h.model.url,
        maxRetries: 0,
      });
      const options = buildTurnOptions({
        kind: 'chat',
        cwd: rawDir,
        env,
        isolation: { kind: 'off' },
        approvals: 'none',
        model: 'claude-sonnet-4-5',
      });
      const t0 = performance.now();
      const live = startLiveQuery({ options });
      live.push(`Alice: raw ${i}`);
      let first: number | undefined;
      for await (const m of live.messages) {
        const e = (m as { type: string; event?: { type: string; delta?: { type?: string } } }).event;
        if (
          first === undefined &&
          m.type === 'stream_event' &&
          e?.type === 'content_block_delta' &&
          e.delta?.type === 'text_delta'
        )
          first = performance.now() - t0;
        if (m.type === 'result') live.end();
      }
      await live.ended;
      // The bot: from the moment the mention is dispatched to the first message of the reply, and to its first edit.
      const b0 = Date.now();
      const { message, threadId } = await h.mention(ALICE, `bench ${i}`);
      expect(await h.settled(message)).toBe('✅');
      const reply = h.discord.rest.filter((r) => r.path.startsWith(`/channels/${threadId}/messages`) && r.at >= b0);
      const firstPost = reply.find((r) => r.method === 'POST')!;
      const firstPatch = reply.find((r) => r.method === 'PATCH')!;
      if (i === 0) continue; // warm-up: the first CLI start of the run pays for cold disk caches
      raw.push(Math.round(first!));
      bot.push(firstPost.at - b0);
      botEdit.push(firstPatch.at - b0);
    }
    const section = [
      '<!-- bench:discord -->',
      '## bubble-discord',
      '',
      `Written by \`npm run bench:discord\` (packages/discord-bot/bench/mention-latency.bench-run.ts) on ${new Date().toISOString()}, ${cpus().length} CPUs, Node ${process.version}.`,
      'The bot runs in the bench process with the real discord.js against the Discord double and the real CLI against the model double;',
      "the raw SDK baseline runs the same chat-mode query options (one CLI per turn, as the bot does), its samples interleaved with the bot's.",
      'Bot latency is measured from the dispatch of a message that mentions the bot to the double receiving the first message of the reply',
      '(the first text Claude streamed) and then its first edit; this includes starting a Discord thread, the 👀 reaction and the CLI start.',
      `Edits are paced at the product's default of one per ${DEFAULT_EDIT_INTERVAL_MS} ms; this reply streams for about 0.35 s, so its first edit is the finished text, sent as the turn ends.`,
      '',
      `| figure (median of ${SAMPLES}) | bubble-discord | raw SDK, same run | ratio |`,
      '|---|---:|---:|---:|',
      `| mention → first reply text in Discord | ${median(bot)} ms | ${median(raw)} ms (query() → first delta) | ${(median(bot) / median(raw)).toFixed(2)}x |`,
      `| mention → first edit of that reply | ${median(botEdit)} ms | | |`,
      '',
      `Samples (ms): bot first text ${bot.join(', ')}; bot first edit ${botEdit.join(', ')}; raw first delta ${raw.join(', ')}. Whole run ${Math.round((Date.now() - started) / 1000)} s.`,
      '<!-- /bench:discord -->',
    ].join('\n');
    process.stdout.write(`${section}\n`);
    const file = new URL('../../../BENCHMARKS.md', import.meta.url);
    const text = await readFile(file, 'utf8');
    const marked = /<!-- bench:discord -->[\s\S]*?<!-- \/bench:discord -->/;
    await writeFile(file, marked.test(text) ? text.replace(marked, section) : `${text.trimEnd()}\n\n${section}\n`);
  } finally {
    await h.close();
    await rm(rawDir, { recursive: true, force: true });
  }
});
