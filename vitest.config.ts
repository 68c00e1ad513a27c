import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

/**
 * `bubble-source` is the export condition under which a package offers its test helpers
 * (`@bubble/server/testing`) as TypeScript source: tests resolve them, the built packages do
 * not ship them (they are not in `dist`).
 */
const conditions = ['bubble-source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
