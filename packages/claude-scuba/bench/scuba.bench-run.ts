import { it } from 'vitest';
import { runScubaBench } from './scuba-bench.js';

// `npm run bench:scuba`: the figures print on stdout and go into BENCHMARKS.md; nothing is asserted.
it('claude-scuba beside the raw Agent SDK', async () => {
  await runScubaBench();
});
