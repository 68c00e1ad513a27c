import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { query as sdkQuery } from '@anthropic-ai/claude-agent-sdk';
import { RunQueue, startLiveQuery, type LiveQueryOptions, type NarrowedSdkMessage } from '@bubble/engine';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/resolve-config.js';
import type { SessionStore, ThreadSessionRecord } from './session-store.js';
import { safeDirName, ThreadQuery, type ThreadQueryOptions } from './thread-query.js';

const init = {
  type: 'system',
  subtype: 'init',
  session_id: 's-1',
  model: 'm',
  cwd: '/w',
  tools: [],
  permissionMode: 'default',
};

/** The SDK's query() as a script: it yields these messages when `release` is called, then the CLI exits. */
function scriptedSdk(messages: unknown[]) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const query = (() => {
    const stream = (async function* () {
      await gate;
      for (const message of messages) yield message;
    })();
    return Object.assign(stream, { interrupt: async () => undefined, close: () => release() });
  }) as unknown as typeof sdkQuery;
  return { query, release: () => release() };
}

function memoryStore(): SessionStore & { sessions: Map<string, string | null> } {
  const records = new Map<string, ThreadSessionRecord>();
  const sessions = new Map<string, string | null>();
  return {
    sessions,
    get: (threadId) => records.get(threadId),
    fixWorkspace(threadId, workspace) {
      const record = records.get(threadId) ?? { threadId, workspace, claudeSessionId: null };
      records.set(threadId, record);
      return record;
    },
    setClaudeSession: (threadId, id) => sessions.set(threadId, id),
    markReleased: () => undefined,
    isReleased: () => false,
    wasAwake: () => false,
    setAwake: () => undefined,
    close: () => undefined,
  };
}

describe('ThreadQuery', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'thread-query-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function setup(messages: unknown[]) {
    const resolved = resolveConfig(
      {
        bubble: { url: 'http://127.0.0.1:1', principalId: 'bot-a', token: 't' },
        claude: { workspaceRoot: join(root, 'ws'), configDir: join(root, 'claude') },
      },
      { env: { ANTHROPIC_API_KEY: 'k', IS_SANDBOX: '1' }, baseDir: root, readFile: () => '' },
    );
    if (!resolved.ok) throw new Error(resolved.problems.join('; '));
    const sdk = scriptedSdk(messages);
    const seen: Array<NarrowedSdkMessage['kind']> = [];
    const ends: string[] = [];
    const runQueue = new RunQueue({ size: 1 });
    const store = memoryStore();
    const started: LiveQueryOptions[] = [];
    const options: ThreadQueryOptions = {
      threadId: 'th/1',
      config: resolved.config,
      store,
      runQueue,
      startQuery: (params) => {
        started.push(params);
        return startLiveQuery({ ...params, query: sdk.query });
      },
      childEnv: { PATH: '/bin' },
      isolation: { kind: 'off' },
      canUseTool: async () => ({ behavior: 'allow' }),
      mcpServers: () => undefined,
      logger: pino({ level: 'silent' }),
      freeSlot: () => false,
      waitsForSlot: () => undefined,
      opened: () => undefined,
      message: async (_query, message) => {
        seen.push(message.kind);
      },
      ended: (_query, end) => ends.push(end.reason),
    };
    return { query: new ThreadQuery(options), sdk, seen, ends, runQueue, store, started };
  }

  it('opens one query for concurrent callers, in the thread’s own workspace, and reads it to its end', async () => {
    const { query, sdk, seen, ends, runQueue, started } = setup([init]);
    const [a, b] = await Promise.all([query.ensure(), query.ensure()]);
    expect(a).toBe(b);
    expect(started).toHaveLength(1);
    expect(query.workspaceDir).toBe(join(root, 'ws', safeDirName('th/1')));
    expect(runQueue.snapshot().running).toHaveLength(1);
    sdk.release();
    await a.ended;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(['init']);
    expect(ends).toEqual(['cli_exit']);
    expect(query.current).toBeUndefined();
    expect(runQueue.snapshot().running).toHaveLength(0);
  });

  it('a query set aside frees its slot, and what it says on the way out is not read', async () => {
    const { query, seen, ends, runQueue } = setup([init]);
    const live = await query.ensure();
    query.setAside();
    expect(query.live).toBeUndefined();
    expect(runQueue.snapshot().running).toHaveLength(0);
    await live.ended;
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    expect(ends).toEqual(['closed']);
  });

  it('stores the session id once', async () => {
    const { query, sdk, store } = setup([init]);
    const live = await query.ensure();
    sdk.release();
    await live.ended;
    query.storeSessionId(live);
    expect(store.sessions.get('th/1')).toBe('s-1');
    store.sessions.clear();
    query.storeSessionId(live);
    expect(store.sessions.size).toBe(0);
    query.forgetSessionId();
    expect(store.sessions.get('th/1')).toBeNull();
  });
});
