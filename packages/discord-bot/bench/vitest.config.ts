import { defineConfig } from 'vitest/config';

/** `npm run bench:discord`: the bench runs through vitest so it can use the test doubles as they are (TypeScript, not built into dist). */
export default defineConfig({
  test: {
    root: new URL('../../..', import.meta.url).pathname,
    include: ['packages/discord-bot/bench/*.bench-run.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
