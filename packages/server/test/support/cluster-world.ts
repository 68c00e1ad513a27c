/**
 * Several real `bubble-server serve --database …` processes on one fresh PostgreSQL database, for
 * the multi-instance tests: each on 127.0.0.1 and an ephemeral port, with people created by the
 * operator CLI (`principal create-human --database …`) exactly as an operator would.
 */
import type { ChildProcess } from 'node:child_process';
import { client, type TestClient } from '../../src/testing/test-client.js';
import { runCli, serveCli } from '../../src/testing/cli-process.js';
import { TestSocket, type Frame } from '../../src/ws/ws-test-client.js';
import { freshDatabase, type TestDatabase } from './test-postgres.js';

export interface Instance {
  readonly name: string;
  readonly url: string;
  readonly wsUrl: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  /** The server's stderr so far (pino JSON at the chosen level). */
  stderr(): string;
  /** A client of this instance with this token. */
  as(token: string): TestClient;
  /** A socket to this instance, authenticated with `token`. */
  socket(token: string): Promise<TestSocket>;
  /** SIGTERM, and waits for the exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** SIGKILL: no shutdown at all, as a crash. */
  kill(): Promise<void>;
}

export interface ClusterWorld {
  readonly db: TestDatabase;
  readonly instances: Instance[];
  /** Tokens of the people created at the start, by id. */
  readonly tokens: Record<string, string>;
  /** Starts one more instance on the same database. */
  start(name?: string): Promise<Instance>;
  /** Creates a person with the operator CLI and returns their token. */
  createHuman(principalId: string): Promise<string>;
  /** Stops every instance still running and drops the database. */
  close(): Promise<void>;
}

/**
 * Default flags of every instance: warn logs; rate limits off, since some tests append as fast as
 * they can as one person; a small pool, since test files run side by side on one PostgreSQL.
 */
const SERVE_FLAGS = ['--log-level', 'warn', '--rate-limit', 'off', '--frame-rate-limit', 'off', '--pg-pool-size', '4'];

export async function startClusterWorld(
  label: string,
  options: { instances: number; humans?: string[]; serveFlags?: string[] },
): Promise<ClusterWorld> {
  const db = await freshDatabase(label);
  const instances: Instance[] = [];
  const flags = options.serveFlags ?? SERVE_FLAGS;
  let started = 0;
  const start = async (name = `instance-${String.fromCharCode(97 + started)}`): Promise<Instance> => {
    started += 1;
    const instance = await startInstance(db.url, name, flags);
    instances.push(instance);
    return instance;
  };
  const createHuman = async (principalId: string): Promise<string> => {
    const { stdout } = await runCli(['principal', 'create-human', principalId, '--database', db.url]);
    return (JSON.parse(stdout) as { token: { token: string } }).token.token;
  };
  const world: ClusterWorld = {
    db,
    instances,
    tokens: {},
    start,
    createHuman,
    async close() {
      await Promise.all(instances.map((instance) => instance.stop()));
      await db.drop();
    },
  };
  try {
    // The first instance creates the schema; the others then start side by side.
    await start();
    await Promise.all(Array.from({ length: options.instances - 1 }, () => start()));
    const humans = options.humans ?? ['alice', 'bob', 'carol'];
    const tokens = await Promise.all(humans.map(createHuman));
    humans.forEach((id, i) => {
      world.tokens[id] = tokens[i]!;
    });
  } catch (error) {
    await world.close().catch(() => {});
    throw error;
  }
  return world;
}

export async function startInstance(
  databaseUrl: string,
  name: string,
  flags: string[] = SERVE_FLAGS,
): Promise<Instance> {
  const serve = serveCli(['--host', '127.0.0.1', '--port', '0', '--database', databaseUrl, ...flags]);
  const url = await serve.listening;
  const wsUrl = `${url.replace(/^http/, 'ws')}/v1/ws`;
  const { child, exited } = serve;
  const waitExit = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.kill(signal);
    await exited;
    clearTimeout(timer);
  };
  return {
    name,
    url,
    wsUrl,
    child,
    exited,
    stderr: () => serve.output().stderr,
    as: (token) => client(url, token),
    async socket(token) {
      return (await TestSocket.authenticated(wsUrl, token)).socket;
    },
    stop: () => waitExit('SIGTERM'),
    kill: () => waitExit('SIGKILL'),
  };
}

/** Creates a thread as `owner` through `instance` and adds each of `members` (a person accepts with their token in `tokens`); returns its id. */
export async function sharedThread(
  instance: Instance,
  ownerToken: string,
  members: string[] = [],
  tokens: Record<string, string> = {},
): Promise<string> {
  const api = instance.as(ownerToken);
  const created = await api.post('/v1/threads', { title: 'shared' });
  if (created.status !== 201) throw new Error(`creating a thread: ${created.status} ${created.text}`);
  const threadId = created.body.thread.threadId as string;
  for (const principalId of members) {
    const added = await api.post(`/v1/threads/${threadId}/participants`, { principalId, role: 'member' });
    // A person the owner cannot see yet is invited (Consent) and accepts with their token from `tokens`.
    const token = tokens[principalId];
    const granted =
      added.status === 202 && token !== undefined
        ? await instance.as(token).post(`/v1/invitations/${threadId}/accept`)
        : added;
    if (granted.status !== 201 && granted.status !== 200)
      throw new Error(`granting ${principalId}: ${granted.status} ${granted.text}`);
  }
  return threadId;
}

/** Subscribes on `socket` and resolves with the `subscribed` frame. */
export async function subscribe(socket: TestSocket, id: string, threadId: string, afterSeq = 0): Promise<Frame> {
  socket.send({ type: 'subscribe', id, threadId, afterSeq });
  return socket.next((frame) => frame.id === id && (frame.type === 'subscribed' || frame.type === 'error'));
}

/**
 * Every event frame of subscription `id` on `socket` until the last seq reaches `headSeq`, then
 * whatever else arrives within `settleMs` (a duplicate would show there). Fails on a frame out of
 * order, a duplicate or a gap as soon as it shows. `presence` frames (a participant coming online
 * or going offline: no seq) are not events and are passed over.
 */
export async function collectSeqs(
  socket: TestSocket,
  id: string,
  afterSeq: number,
  headSeq: number,
  options: { timeoutMs?: number; settleMs?: number } = {},
): Promise<number[]> {
  const seqs: number[] = [];
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last = afterSeq;
  while (last < headSeq) {
    const frame = await socket.next((f) => f.id === id && f.type !== 'presence', Math.max(1, deadline - Date.now()));
    if (frame.type !== 'event') throw new Error(`expected an event frame, got ${JSON.stringify(frame)}`);
    const seq = (frame.event as { seq: number }).seq;
    if (seq !== last + 1) throw new Error(`subscription ${id}: seq ${seq} after ${last}`);
    seqs.push(seq);
    last = seq;
  }
  await new Promise((r) => setTimeout(r, options.settleMs ?? 200));
  const extra = await socket.roundTrip();
  const more = extra.filter((f) => f.id === id && f.type === 'event');
  if (more.length > 0) throw new Error(`subscription ${id}: ${more.length} events past head ${headSeq}`);
  return seqs;
}

export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Creates a bot owned by the holder of `ownerToken` through `instance`; returns its token. */
export async function createBot(instance: Instance, ownerToken: string, principalId: string): Promise<string> {
  const created = await instance.as(ownerToken).post('/v1/principals', { principalId, kind: 'bot' });
  if (created.status !== 201) throw new Error(`creating bot ${principalId}: ${created.status} ${created.text}`);
  return created.body.token.token as string;
}

/** `online` of each participant of a thread, as `instance` answers the participants route. */
export async function onlineOn(instance: Instance, token: string, threadId: string): Promise<Record<string, boolean>> {
  const res = await instance.as(token).get(`/v1/threads/${threadId}/participants`);
  if (res.status !== 200) throw new Error(`participants: ${res.status} ${res.text}`);
  return Object.fromEntries(
    (res.body.grants as Array<{ principalId: string; online: boolean }>).map((g) => [g.principalId, g.online]),
  );
}

/** The next `presence` frame on `socket` (other frames are skipped). */
export function nextPresence(socket: TestSocket, timeoutMs = 10_000): Promise<Frame> {
  return socket.next((frame) => frame.type === 'presence', timeoutMs);
}
