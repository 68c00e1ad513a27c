import type { ClaimOptions, Options, SpareProcess } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import type { LiveQuery } from './live-query.js';
import { RunQueue } from './run-queue.js';
import { SpareEngine, type SpareSetup } from './spare-engine.js';

/**
 * The pool's rules with a stand-in for the SDK's prewarm(): which spare holds
 * which slot, and what happens when a claim fails. The real CLI's side is in
 * test/spares.test.ts.
 */

type ClaimOutcome = 'ok' | 'hang' | Error;

/** A parked CLI as the SDK hands it over: `claim`, `claimed`, `exited`, `close`. */
class FakeSpare {
  readonly claims: ClaimOptions[] = [];
  readonly settings: unknown[] = [];
  closed = false;
  readonly exited: Promise<void>;
  readonly claimed: Promise<{ cwd: string; sessionId: string; sdkMcpSettled: boolean }>;
  #exit!: () => void;
  #settle!: (outcome: ClaimOutcome) => void;

  constructor(readonly outcome: ClaimOutcome) {
    this.exited = new Promise((resolve) => (this.#exit = resolve));
    this.claimed = new Promise((resolve, reject) => {
      this.#settle = (o) => {
        if (o === 'ok') resolve({ cwd: '/ws', sessionId: 'sess-1', sdkMcpSettled: true });
        else if (o instanceof Error) reject(o);
      };
    });
    this.claimed.catch(() => undefined);
  }

  claim(params: { options: ClaimOptions }): unknown {
    this.claims.push(params.options);
    queueMicrotask(() => this.#settle(this.outcome));
    const done = this.exited;
    // A stream that yields nothing and ends when the CLI exits.
    return Object.assign(
      {
        [Symbol.asyncIterator]: () => ({
          next: async (): Promise<IteratorResult<never>> => {
            await done;
            return { done: true, value: undefined };
          },
        }),
      },
      {
        interrupt: async () => undefined,
        close: () => this.close(),
        applyFlagSettings: async (s: unknown) => {
          this.settings.push(s);
        },
      },
    );
  }

  close(): void {
    this.closed = true;
    this.#settle(new Error('spare_closed'));
    this.#exit();
  }

  /** The CLI dies on its own. */
  die(): void {
    this.#exit();
  }
}

function fakeQuery(): LiveQuery {
  let closed = false;
  return {
    get closed() {
      return closed;
    },
    close: () => {
      closed = true;
    },
  } as unknown as LiveQuery;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

function setup(options: { size?: number; count?: number; outcomes?: ClaimOutcome[]; claimTimeoutMs?: number } = {}) {
  const runQueue = new RunQueue({ size: options.size ?? 2 });
  const outcomes = [...(options.outcomes ?? [])];
  const spares: FakeSpare[] = [];
  const disposed: string[] = [];
  const bound: Array<string | undefined> = [];
  let failNext: Error | undefined;
  const engine = new SpareEngine<string>({
    count: options.count ?? 1,
    runQueue,
    refillDelayMs: 0,
    ...(options.claimTimeoutMs !== undefined ? { claimTimeoutMs: options.claimTimeoutMs } : {}),
    prepare: (spareId): SpareSetup<string> => ({
      options: { cwd: undefined, env: { TMPDIR: `/tmp/${spareId}` } } as Options,
      bind: (binding) => bound.push(binding),
      dispose: () => disposed.push(spareId),
    }),
    prewarm: async () => {
      if (failNext) {
        const error = failNext;
        failNext = undefined;
        throw error;
      }
      const spare = new FakeSpare(outcomes.shift() ?? 'ok');
      spares.push(spare);
      return spare as unknown as SpareProcess;
    },
  });
  const request = (id: string, overrides: Partial<Parameters<typeof engine.open>[0]> = {}) => {
    const fallbacks: LiveQuery[] = [];
    const served = engine.open({
      id,
      binding: id,
      plan: () => ({ claim: { cwd: `/ws/${id}` }, settings: { permissions: { deny: ['Read(//x)'] } } }),
      fallback: () => {
        const query = fakeQuery();
        fallbacks.push(query);
        return query;
      },
      ...overrides,
    });
    return { served, fallbacks };
  };
  return {
    runQueue,
    engine,
    spares,
    disposed,
    bound,
    request,
    failPrewarm: (error: Error) => (failNext = error),
  };
}

describe('SpareEngine', () => {
  it('parks up to its count, each spare holding a CLI slot', async () => {
    const { engine, runQueue } = setup({ size: 3, count: 2 });
    engine.start();
    await tick();
    expect(engine.snapshot()).toEqual({ parked: ['spare-1', 'spare-2'], starting: [] });
    expect(runQueue.snapshot()).toEqual({ running: ['spare-1', 'spare-2'], waiting: [] });
    await engine.stop();
  });

  it('starts none while every slot is taken, and one as soon as a slot frees with nobody waiting', async () => {
    const { engine, runQueue, spares } = setup({ size: 1 });
    const release = await runQueue.acquire({ id: 'thread-a' });
    engine.start();
    await tick();
    expect(spares).toHaveLength(0);
    // A thread waits: the freed slot is its, not a spare's.
    const waiting = runQueue.enqueue({ id: 'thread-b' });
    release();
    (await waiting.acquired)();
    await tick();
    expect(runQueue.snapshot().running).toEqual(['spare-1']);
    expect(spares).toHaveLength(1);
    await engine.stop();
  });

  it("a claim takes the spare's slot, binds the run, applies its settings before it resolves, and another spare follows", async () => {
    const { engine, runQueue, spares, bound, request } = setup({ size: 2 });
    engine.start();
    await tick();
    const { served, fallbacks } = request('thread-a#1');
    expect(runQueue.snapshot().running).toEqual(['thread-a#1']);
    const result = await served!;
    expect(result).toMatchObject({ spareId: 'spare-1', claimed: true });
    expect(fallbacks).toHaveLength(0);
    expect(spares[0]!.claims).toEqual([{ cwd: '/ws/thread-a#1', settings: {} }]);
    expect(spares[0]!.settings).toEqual([{ permissions: { deny: ['Read(//x)'] } }]);
    expect(bound).toEqual(['thread-a#1']);
    await tick();
    expect(runQueue.snapshot().running).toEqual(['thread-a#1', 'spare-2']);
    result.release();
    expect(runQueue.snapshot().running).toEqual(['spare-2']);
    await engine.stop();
  });

  it('a refused claim falls back to a normal query in the same slot, and the refused spare is closed and cleaned up', async () => {
    const { engine, runQueue, spares, bound, disposed, request } = setup({
      outcomes: [new Error('cwd_not_found: the claim cwd does not exist')],
    });
    engine.start();
    await tick();
    const { served, fallbacks } = request('thread-a#1');
    const result = await served!;
    expect(result).toMatchObject({ spareId: 'spare-1', claimed: false });
    expect(result.query).toBe(fallbacks[0]);
    expect(fallbacks).toHaveLength(1);
    expect(spares[0]!.closed).toBe(true);
    // Nothing of the run stays reachable through the refused spare.
    expect(bound).toEqual(['thread-a#1', undefined]);
    expect(runQueue.snapshot().running).toContain('thread-a#1');
    await tick();
    expect(disposed).toContain('spare-1');
    await engine.stop();
  });

  it('a spare that does not answer its claim is given up after the timeout', async () => {
    const { engine, spares, request } = setup({ outcomes: ['hang'], claimTimeoutMs: 30 });
    engine.start();
    await tick();
    const result = await request('thread-a#1').served!;
    expect(result.claimed).toBe(false);
    expect(spares[0]!.closed).toBe(true);
    await engine.stop();
  });

  it('a run the spare cannot serve gets a normal query without a claim', async () => {
    const { engine, spares, request } = setup();
    engine.start();
    await tick();
    const { served, fallbacks } = request('thread-a#1', { plan: () => ({ refuse: 'another isolation' }) });
    expect((await served!).claimed).toBe(false);
    expect(fallbacks).toHaveLength(1);
    expect(spares[0]!.claims).toEqual([]);
    expect(spares[0]!.closed).toBe(true);
    await engine.stop();
  });

  it('with no spare there, open leaves the run to queue as before', async () => {
    const { engine, request } = setup({ count: 0 });
    engine.start();
    expect(request('thread-a#1').served).toBeUndefined();
    await engine.stop();
  });

  it('yieldSlot closes a spare for a run that cannot use it', async () => {
    const { engine, runQueue, spares } = setup({ size: 1 });
    engine.start();
    await tick();
    expect(engine.yieldSlot('slot wanted by thread-a')).toBe(true);
    const ticket = runQueue.enqueue({ id: 'thread-a#1' });
    expect(ticket.position()).toBe(0);
    await tick();
    expect(spares[0]!.closed).toBe(true);
    expect(engine.yieldSlot('again')).toBe(false);
    await engine.stop();
  });

  it('replaces a spare that dies while parked, and retries a start that failed, after a back-off', async () => {
    const { engine, runQueue, spares, disposed, failPrewarm } = setup();
    engine.start();
    await tick();
    failPrewarm(new Error('the CLI would not start'));
    spares[0]!.die();
    await tick();
    expect(runQueue.snapshot().running).toEqual([]);
    expect(disposed).toEqual(['spare-1']);
    // 1 s later the next start fails (the slot goes back), 2 s after that one parks.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(spares).toHaveLength(1);
    expect(runQueue.snapshot().running).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(engine.snapshot().parked).toEqual(['spare-3']);
    await engine.stop();
  }, 10_000);

  it('stop closes every spare not claimed and starts no more', async () => {
    const { engine, runQueue, spares } = setup({ size: 3, count: 2 });
    engine.start();
    await tick();
    await engine.stop();
    expect(spares.map((s) => s.closed)).toEqual([true, true]);
    expect(runQueue.snapshot().running).toEqual([]);
    await tick();
    expect(spares).toHaveLength(2);
  });
});
