import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * `npm run bench:web`: the web UI's bench runs through vitest so it can use the browser tests'
 * support (the real server serving the built UI, TypeScript, not in dist).
 */
const conditions = ['bubble-source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    root: new URL('../../..', import.meta.url).pathname,
    include: ['packages/launcher/bench/*.bench-run.ts'],
    testTimeout: 900_000,
    hookTimeout: 300_000,
    pool: 'forks',
  },
});
