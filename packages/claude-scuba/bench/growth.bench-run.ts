import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startModelDouble } from '@bubble/model-double';
import { it } from 'vitest';
import { writeBenchSection } from './benchmarks-md.js';
import { runGrowthBench } from './growth-bench.js';

// `npm run bench:scuba` (or `npm run bench:scuba -- growth` alone): printed and written to BENCHMARKS.md; nothing is asserted.
it('claude-scuba with many threads', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'scuba-growth-'));
  const double = await startModelDouble({
    script: [{ name: 'short', reply: [{ type: 'text', text: 'Short answer here.' }], times: 'always' }],
  });
  const load = loadavg()[0]!.toFixed(2);
  try {
    const rows = await runGrowthBench(double.url, dir);
    const section = [
      '## claude-scuba with many threads',
      '',
      `Written by \`npm run bench:scuba\` (packages/claude-scuba/bench/growth-bench.ts) on ${new Date().toISOString()}, ${cpus().length} CPUs, Node ${process.version}; load average (1 min) ${load} at the start, ${loadavg()[0]!.toFixed(2)} at the end.`,
      'The real `claude-scuba` process against the real server (default rate limits) in the bench process. Each size is a restart of a bot',
      'that had joined and read every thread before (its state file kept), so every thread is idle; boot is from spawn to its',
      '"following every thread" log line (every subscription confirmed by the server); memory is VmRSS after it has sat for',
      `${(Number(process.env.BENCH_SETTLE_MS ?? 15_000) / 1000).toFixed(0)} s, read against the same bot with no thread in the same run.`,
      '',
      ...rows,
      '',
    ].join('\n');
    process.stdout.write(`${section}\n`);
    writeBenchSection('scuba-growth', section);
  } finally {
    await double.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
