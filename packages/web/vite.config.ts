import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The sdk's HTTP client and live connection are written for Node; in the browser
 * two imports are swapped for small shims: `ws` (the native WebSocket behind the
 * `ws` API the sdk uses) and `node:crypto` (randomUUID).
 */
export default defineConfig({
  root: here('.'),
  base: '/',
  resolve: {
    alias: [
      { find: /^ws$/, replacement: here('./src/shims/browser-ws.ts') },
      { find: /^node:crypto$/, replacement: here('./src/shims/browser-crypto.ts') },
    ],
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: here('./dist'),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  logLevel: 'warn',
});
