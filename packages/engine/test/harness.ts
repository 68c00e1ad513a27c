/**
 * Test harness: the real Agent SDK and its CLI against the model double, in a
 * private temp HOME/CLAUDE_CONFIG_DIR and cwd. With RECORD_FIXTURES=1 each
 * scenario also rewrites its recorded SDK stream under src/__fixtures__/.
 */
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Options } from '@anthropic-ai/claude-agent-sdk';
import { startModelDouble, type ModelDouble, type Script } from '@bubble/model-double';
import {
  buildChildEnv,
  startLiveQuery,
  type EngineCredential,
  type LiveQuery,
  type SdkMessageLike,
} from '../src/index.js';

export const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', '__fixtures__');
/** Recorded temp paths are replaced by this, so fixtures do not carry random directory names. */
export const FIXTURE_ROOT = '/tmp/bubble-engine-fixture';
const RECORD = process.env.RECORD_FIXTURES === '1';

export interface Harness {
  double: ModelDouble;
  root: string;
  cwd: string;
  configDir: string;
  env: Record<string, string>;
  /** SDK options for a scenario: private dirs, no setting sources, partial messages on. */
  options(extra?: Partial<Options>): Options;
  /** Opens a LiveQuery and starts recording its messages. */
  start(extra?: Partial<Options>): Session;
  close(): Promise<void>;
}

export interface HarnessOptions {
  credential?: EngineCredential;
  /** Defaults to the double's URL. */
  baseUrl?: string;
  maxRetries?: number;
}

export async function startHarness(script: Script | null, options: HarnessOptions = {}): Promise<Harness> {
  const double = await startModelDouble(script === null ? {} : { script });
  const root = await mkdtemp(join(tmpdir(), 'bubble-engine-'));
  const cwd = join(root, 'cwd');
  const configDir = join(root, 'claude');
  const tmp = join(root, 'tmp');
  await Promise.all([mkdir(cwd), mkdir(configDir), mkdir(tmp)]);
  const env = buildChildEnv({
    path: process.env.PATH ?? '/usr/bin:/bin',
    configDir,
    tmpDir: tmp,
    credential: options.credential ?? { kind: 'api_key', key: 'sk-ant-double-test' },
    baseUrl: options.baseUrl ?? double.url,
    maxRetries: options.maxRetries ?? 0,
  });
  const sessions: Session[] = [];
  const harness: Harness = {
    double,
    root,
    cwd,
    configDir,
    env,
    options: (extra = {}) => ({
      cwd,
      env,
      settingSources: [],
      includePartialMessages: true,
      tools: ['Bash'],
      ...extra,
    }),
    start(extra) {
      const session = new Session(startLiveQuery({ options: harness.options(extra) }), root);
      sessions.push(session);
      return session;
    },
    async close() {
      for (const s of sessions) s.live.close();
      await Promise.all(sessions.map((s) => s.live.ended));
      await double.close();
      await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
  return harness;
}

/** Drives a LiveQuery and keeps every message it yields, in order. */
export class Session {
  readonly messages: SdkMessageLike[] = [];
  readonly #waiters = new Set<() => void>();
  readonly drained: Promise<void>;
  #done = false;

  constructor(
    readonly live: LiveQuery,
    readonly root: string,
  ) {
    this.drained = (async () => {
      for await (const m of live.messages) {
        this.messages.push(m);
        for (const w of [...this.#waiters]) w();
      }
      this.#done = true;
      for (const w of [...this.#waiters]) w();
    })();
  }

  /** Resolves with the n-th (1-based) message that satisfies the predicate. */
  waitFor(
    predicate: (m: SdkMessageLike) => boolean,
    { nth = 1, timeoutMs = 25_000, what = 'a message' } = {},
  ): Promise<SdkMessageLike> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hits = this.messages.filter(predicate);
        const hit = hits[nth - 1];
        if (hit) {
          this.#waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
          return true;
        }
        if (this.#done) {
          this.#waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`query ended before ${what} (#${nth}); saw ${this.summary()}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out waiting for ${what} (#${nth}); saw ${this.summary()}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }

  /** The n-th result (1-based). */
  result(nth = 1): Promise<SdkMessageLike> {
    return this.waitFor((m) => m.type === 'result', { nth, what: 'a result' });
  }

  of<T extends string>(type: T, subtype?: string): SdkMessageLike[] {
    return this.messages.filter((m) => m.type === type && (subtype === undefined || m.subtype === subtype));
  }

  /** Text of the top-level text deltas, concatenated. */
  streamedText(): string {
    return this.messages
      .filter((m) => m.type === 'stream_event' && (m.parent_tool_use_id ?? null) === null)
      .map((m) => (m.event as { delta?: { type?: string; text?: string } }).delta)
      .filter((d) => d?.type === 'text_delta')
      .map((d) => d?.text ?? '')
      .join('');
  }

  summary(): string {
    return this.messages
      .map((m) => (m.subtype ? `${m.type}/${String(m.subtype)}` : m.type))
      .filter((t) => t !== 'stream_event')
      .join(', ');
  }

  /** With RECORD_FIXTURES=1, writes the recorded stream to src/__fixtures__/<name>.jsonl. */
  async record(name: string): Promise<void> {
    if (!RECORD) return;
    await mkdir(FIXTURES_DIR, { recursive: true });
    const key = this.root.replace(/[^A-Za-z0-9]/g, '-');
    const fixtureKey = FIXTURE_ROOT.replace(/[^A-Za-z0-9]/g, '-');
    const lines = this.messages.map((m) =>
      JSON.stringify(m).split(this.root).join(FIXTURE_ROOT).split(key).join(fixtureKey),
    );
    await writeFile(join(FIXTURES_DIR, `${name}.jsonl`), `${lines.join('\n')}\n`);
  }
}

/** Pids of processes whose command line contains `needle` (to see a tool actually running). */
export async function findProcesses(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ');
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // the process went away while we looked
    }
  }
  return pids;
}

export async function waitForProcess(needle: string, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [pid] = await findProcesses(needle);
    if (pid !== undefined) return pid;
    if (Date.now() > deadline) throw new Error(`no process running "${needle}" within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function textOf(m: SdkMessageLike): string {
  const content = (m.message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : '')).join('');
}

export function blocksOf(m: SdkMessageLike): Array<Record<string, unknown>> {
  const content = (m.message as { content?: unknown } | undefined)?.content;
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
}

/** Starts a harness that closes when the (possibly concurrent) test finishes. */
export async function harnessFor(
  context: { onTestFinished: (fn: () => Promise<void>) => void },
  script: Script | null,
  options: HarnessOptions = {},
): Promise<Harness> {
  const h = await startHarness(script, options);
  context.onTestFinished(() => h.close());
  return h;
}

/** Pid of the Claude CLI whose environment carries this CLAUDE_CONFIG_DIR. */
export async function findCliPid(configDir: string): Promise<number | undefined> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = (await readFile(`/proc/${entry}/environ`, 'utf8')).split('\0');
      if (environ.includes(`CLAUDE_CONFIG_DIR=${configDir}`) && environ.includes('CLAUDE_CODE_ENTRYPOINT=sdk-ts')) {
        const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
        if (cmdline.includes('claude')) return Number(entry);
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return undefined;
}
