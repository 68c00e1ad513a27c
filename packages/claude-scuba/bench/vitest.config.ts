import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/** `npm run bench:scuba`: run through vitest so the bench can use the server's test helpers (`bubble-source`). */
const conditions = ['bubble-source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    root: new URL('../../..', import.meta.url).pathname,
    include: ['packages/claude-scuba/bench/*.bench-run.ts'],
    testTimeout: 1_800_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One bench at a time: they measure the same machine.
    fileParallelism: false,
    silent: false,
  },
});
