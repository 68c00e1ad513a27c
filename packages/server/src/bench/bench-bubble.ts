/**
 * The Bubble server under test: the real `bubble-server serve` in its own
 * process, with its rate limits on (the defaults, as shipped) or off, and a
 * team of humans whose requests the load generators spread over.
 */
import { join } from 'node:path';
import { DATABASE_FILE_NAME } from '../create-bubble-server.js';
import { createHumanPrincipal } from '../services/principal-service.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { BubbleStore } from '../store/store.js';
import { freePort, httpJson, startServer, type StartedServer } from './bench-processes.js';

export type Limits = 'on' | 'off';

/**
 * People the load is spread over. Rate limits are per principal, so one
 * principal sending 7,000 appends/s (what this machine commits) is not what a
 * team server sees; 32 people at ~200/s each are still past anything real, and
 * each stays under the default 500/s, so the figures with limits on measure
 * what the limiter costs, not what it refuses.
 */
export const BENCH_HUMANS = 32;

export interface Bubble extends StartedServer {
  limits: Limits;
  /** The first human's token: creates threads, subscribes. */
  token: string;
  /** Every human's token; the load rotates over them. */
  tokens: string[];
  host: string;
  port: number;
}

const LIMITS_OFF = ['--rate-limit', 'off', '--frame-rate-limit', 'off', '--failed-auth-limit', 'off'];

/** The id of bench human `i` (0 is the one whose token is `Bubble.token`). */
export const benchHumanId = (i: number): string => `bench-${String(i).padStart(2, '0')}`;

export interface StartOptions {
  /**
   * Setup before the server starts, on its own database file through the store (after the humans
   * exist): what a bench needs in place but does not measure, such as a long thread.
   */
  seed?: (store: BubbleStore) => Promise<void>;
  /** More `serve` flags (a bench that raises a limit says so in its notes). */
  args?: readonly string[];
  /** Flags for node itself, before the script (`--cpu-prof`, ...). */
  nodeArgs?: readonly string[];
}

export async function startBubble(
  serverBin: string,
  dataDir: string,
  limits: Limits,
  options: StartOptions = {},
): Promise<Bubble> {
  // The humans are created the way the operator CLI does it, in one go before the server opens the folder.
  const store = await openSqliteStore(join(dataDir, DATABASE_FILE_NAME));
  const tokens: string[] = [];
  try {
    for (let i = 0; i < BENCH_HUMANS; i += 1) {
      tokens.push((await createHumanPrincipal(store, benchHumanId(i), null)).token.token);
    }
    await options.seed?.(store);
  } finally {
    await store.close();
  }
  const port = await freePort();
  const args = [
    ...(options.nodeArgs ?? []),
    serverBin,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--data',
    dataDir,
    '--log-level',
    'warn',
    ...(limits === 'off' ? LIMITS_OFF : []),
    ...(options.args ?? []),
  ];
  const started = await startServer(process.execPath, args);
  return { ...started, limits, token: tokens[0]!, tokens, host: '127.0.0.1', port };
}

/** A thread of the first human with every other bench human on it as a member (so any of them may append). */
export async function createThread(bubble: Bubble, title: string): Promise<{ threadId: string; headSeq: number }> {
  const { thread } = await httpJson<{ thread: { threadId: string } }>(
    'POST',
    `${bubble.url}/v1/threads`,
    bubble.token,
    { title },
  );
  for (let i = 1; i < BENCH_HUMANS; i += 1) {
    const added = await httpJson<{ grant?: unknown }>(
      'POST',
      `${bubble.url}/v1/threads/${thread.threadId}/participants`,
      bubble.token,
      { principalId: benchHumanId(i), role: 'member' },
    );
    // A bench human the first cannot see yet accepts the invitation (protocol.md, Consent).
    if (added.grant === undefined)
      await httpJson('POST', `${bubble.url}/v1/invitations/${thread.threadId}/accept`, bubble.tokens[i]!, undefined);
  }
  const { thread: after } = await httpJson<{ thread: { threadId: string; headSeq: number } }>(
    'GET',
    `${bubble.url}/v1/threads/${thread.threadId}`,
    bubble.token,
  );
  return after;
}

/** `--limits on|off|both` (default both): which servers to measure. */
export function limitsFromArgs(argv: string[]): Limits[] {
  const at = argv.indexOf('--limits');
  if (at < 0) return ['off', 'on'];
  const value = argv[at + 1];
  if (value === 'both') return ['off', 'on'];
  if (value === 'on' || value === 'off') return [value];
  throw new Error(`--limits takes on, off or both, not ${JSON.stringify(value)}`);
}
