import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HELPER = fileURLToPath(new URL('../../dist/cli/stop-with-parent.js', import.meta.url));

let dir: string;
let child: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bubble-parent-'));
  child = join(dir, 'child.mjs');
  // Watches its parent (a shell that exits 300 ms in), cancels the watch first when asked to,
  // and reports whether `stop` ran before its own deadline.
  await writeFile(
    child,
    `import { stopWithParent } from ${JSON.stringify(HELPER)};
const cancel = stopWithParent(() => { console.log('stopped'); process.exit(0); }, { intervalMs: 20 });
if (process.argv[2] === 'cancel') cancel();
setTimeout(() => { console.log('still running'); process.exit(0); }, 1500);
`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the child in the background of a shell that exits first, as npm's `sh -c` does on SIGTERM; resolves with what it printed. */
function orphan(env: NodeJS.ProcessEnv, arg = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${child}" ${arg} & sleep 0.3`], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    shell.stdout.on('data', (c) => (out += c));
    // 'close' waits for every holder of the pipe, the orphaned child included.
    shell.on('close', () => resolve(out.trim()));
    shell.on('error', reject);
  });
}

describe('stopWithParent', () => {
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

  it('stops a process that npm started once its parent is gone', async () => {
    expect(await orphan({ ...base, npm_command: 'exec' })).toBe('stopped');
  });

  it("leaves a process alone that no npm started (a shell's `&` means: outlive me)", async () => {
    expect(await orphan(base)).toBe('still running');
  });

  it('stops watching once cancelled, so a shutdown under way is not started again', async () => {
    expect(await orphan({ ...base, npm_command: 'exec' }, 'cancel')).toBe('still running');
  });
});
