/** What every section of the server benchmark shares: where things are, the Bubble servers (limits off and on), logging. */
import { mkdtemp } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, stopProcess, type StartedServer } from './bench-processes.js';
import { startBubble, type Bubble, type Limits } from './bench-bubble.js';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '../../../..');
export const serverBin = join(repoRoot, 'packages/server/bin/bubble-server.js');
/** The compiled module of a bench worker. */
export const worker = (name: string): string => join(here, `${name}.js`);

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Each Bubble figure is named for its limits when both runs are measured. */
export const named = (name: string, limits: Limits, modes: readonly Limits[]): string =>
  modes.length === 1 ? name : `${name}, limits ${limits}`;

/** Back to back in alternating order (off then on, then on then off, ...), so drift of the machine does not favour one. */
export const inTurn = (modes: readonly Limits[], turn: number): Limits[] =>
  turn % 2 === 0 ? [...modes] : [...modes].reverse();

export async function startBubbles(
  root: string,
  prefix: string,
  modes: readonly Limits[],
): Promise<Map<Limits, Bubble>> {
  const bubbles = new Map<Limits, Bubble>();
  for (const limits of modes)
    bubbles.set(limits, await startBubble(serverBin, await mkdtemp(join(root, `${prefix}-${limits}-`)), limits));
  return bubbles;
}

export async function stopBubbles(bubbles: Map<Limits, Bubble>): Promise<void> {
  for (const bubble of bubbles.values()) await stopProcess(bubble.child);
}

export async function startBaseline(
  file: string,
  args: string[],
): Promise<StartedServer & { host: string; port: number }> {
  const started = await startServer(process.execPath, [worker(file), ...args]);
  const url = new URL(started.url);
  return { ...started, host: url.hostname, port: Number(url.port) };
}
