import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The sdk's client entry (`@bubble/sdk/client`) is bundled as it is: no alias stands in for a
 * Node module. The page hands the live connection the browser's own WebSocket (`api.ts`), and
 * the sdk's ids come from Web Crypto.
 */
export default defineConfig({
  root: here('.'),
  base: '/',
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
