import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SandboxProbe =
  | { readonly ok: true; readonly bwrap: string }
  | { readonly ok: false; readonly reason: string };

/** What Claude Code's sandbox needs on Linux (engine-notes §8): it refuses to start without either. */
const REQUIRED = ['bwrap', 'socat'] as const;

/**
 * Whether Claude Code's sandbox can start for a child with this PATH: its
 * helpers are on it and bubblewrap can make the namespaces it uses (a
 * container without user namespaces fails here rather than at a tool call).
 * The reason says what is missing, in words an operator can act on.
 */
export async function probeSandbox(
  pathEnv: string,
  options: { platform?: NodeJS.Platform; timeoutMs?: number } = {},
): Promise<SandboxProbe> {
  const platform = options.platform ?? process.platform;
  if (platform !== 'linux')
    return { ok: false, reason: `the sandbox is set up for Linux (bubblewrap) only; this is ${platform}` };
  const found = new Map<string, string>();
  for (const name of REQUIRED) {
    const hit = pathEnv
      .split(delimiter)
      .filter((dir) => dir !== '')
      .map((dir) => join(dir, name))
      .find(isExecutable);
    if (hit !== undefined) found.set(name, hit);
  }
  const missing = REQUIRED.filter((name) => !found.has(name));
  if (missing.length > 0) {
    return {
      ok: false,
      reason: `${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not on PATH (install Debian's bubblewrap and socat packages)`,
    };
  }
  const bwrap = found.get('bwrap')!;
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(
      bwrap,
      ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--unshare-net', '--proc', '/proc', '--', 'true'],
      { timeout: options.timeoutMs ?? 5_000 },
      (error, _stdout, stderr) => resolve(error ? stderr.trim() || error.message : undefined),
    );
  });
  if (failure !== undefined)
    return { ok: false, reason: `bubblewrap (${bwrap}) cannot create its namespaces here: ${failure}` };
  return { ok: true, bwrap };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
