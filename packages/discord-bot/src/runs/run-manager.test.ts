import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ReplyStream, type ReplyTarget } from '../reply/reply-stream.js';
import { RunManager } from './run-manager.js';

const logger = pino({ level: 'silent' });

/** A channel in memory: message id -> every content it had. */
function memoryTarget(): ReplyTarget & { messages: Map<string, string[]> } {
  const messages = new Map<string, string[]>();
  return {
    messages,
    async send(content) {
      const id = String(messages.size + 1);
      messages.set(id, [content]);
      return id;
    },
    async edit(id, content) {
      messages.get(id)!.push(content);
    },
    async typing() {},
    async remove(id) {
      messages.delete(id);
    },
    isGone: () => true,
  };
}

const info = (threadId: string, userId = 'u1') => ({
  kind: 'chat' as const,
  threadId,
  threadName: `t-${threadId}`,
  guildId: 'g',
  userId,
  userName: userId,
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('RunManager', () => {
  it('runs at most maxConcurrentRuns at once, and tells the queued their place in line', async () => {
    const manager = new RunManager({ maxConcurrentRuns: 1, logger });
    const gates = [deferred(), deferred(), deferred()];
    const order: string[] = [];
    const targets = [memoryTarget(), memoryTarget(), memoryTarget()];
    const runs = targets.map((target, i) =>
      manager.submit(info(`t${i}`), new ReplyStream(target, { logger, editIntervalMs: 0 }), async () => {
        order.push(`start ${i}`);
        await gates[i]!.promise;
      }),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(manager.runs().map((r) => [r.threadId, r.state, r.position])).toEqual([
      ['t0', 'running', undefined],
      ['t1', 'queued', 1],
      ['t2', 'queued', 2],
    ]);
    expect(targets[1]!.messages.get('1')![0]).toContain('#1 in line');
    expect(targets[2]!.messages.get('1')![0]).toContain('#2 in line');
    gates[0]!.resolve();
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['start 0', 'start 1']);
    expect(targets[2]!.messages.get('1')!.at(-1)).toContain('#1 in line');
    gates[1]!.resolve();
    gates[2]!.resolve();
    await Promise.all(runs.map((r) => r.done));
    expect(order).toEqual(['start 0', 'start 1', 'start 2']);
    expect(manager.runs()).toEqual([]);
  });

  it('runs the turns of one thread one after another', async () => {
    const manager = new RunManager({ maxConcurrentRuns: 4, logger });
    const events: string[] = [];
    const body = (name: string) => async () => {
      events.push(`${name} start`);
      await new Promise((r) => setTimeout(r, 10));
      events.push(`${name} end`);
    };
    const a = manager.submit(info('same'), new ReplyStream(memoryTarget(), { logger }), body('a'));
    const b = manager.submit(info('same'), new ReplyStream(memoryTarget(), { logger }), body('b'));
    await Promise.all([a.done, b.done]);
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end']);
  });

  it('aborts a running run and a queued one of a thread, and says why', async () => {
    const manager = new RunManager({ maxConcurrentRuns: 1, logger });
    const running = memoryTarget();
    const queued = memoryTarget();
    const runningReply = new ReplyStream(running, { logger, editIntervalMs: 0 });
    const first = manager.submit(
      info('x'),
      runningReply,
      (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())),
    );
    const second = manager.submit(info('x'), new ReplyStream(queued, { logger, editIntervalMs: 0 }), async () => {
      throw new Error('must not run');
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(manager.abortThread('x', 'Stopped by /reset.')).toBe(2);
    await Promise.all([first.done, second.done]);
    expect(manager.abort(first.id)).toBe(false);
    expect([...queued.messages.values()].flat().at(-1)).toContain('Stopped by /reset.');
  });
});
