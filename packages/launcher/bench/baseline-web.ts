import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');

/**
 * The web UI as it was before the conversation followed (issue [web-ui]): one live
 * subscription from seq 0, a render per event, a scroll effect on every render. Its source is
 * taken from that commit (`git archive`, read only) into the gitignored `test-results/`, inside
 * the repository so that its imports resolve to the same node_modules, and built once.
 */
export const BASELINE_COMMIT = 'f34a12d';

export function baselineWebRoot(): string {
  const dir = join(root, 'test-results', `web-baseline-${BASELINE_COMMIT}`);
  const dist = join(dir, 'packages/web/dist');
  if (existsSync(join(dist, 'index.html'))) return dist;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const archive = execFileSync('git', ['archive', BASELINE_COMMIT, 'packages/web'], { cwd: root, maxBuffer: 64 << 20 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  execFileSync('npx', ['vite', 'build', '--config', join(dir, 'packages/web/vite.config.ts')], {
    cwd: root,
    stdio: 'inherit',
  });
  return dist;
}
