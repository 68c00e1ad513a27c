import { describe, expect, it } from 'vitest';
import { startLiveQuery } from '../src/index.js';
import { findCliPid, harnessFor, Session } from './harness.js';

describe.concurrent('query lifecycle: resume, dead CLI, close (real CLI against the model double)', () => {
  it('resumes a session by id in a new query: same session id, the history is sent', async (ctx) => {
    const h = await harnessFor(ctx, [
      { match: { text: 'remember the word pelican' }, reply: [{ type: 'text', text: 'Noted: pelican.' }] },
      { match: { text: 'what was the word' }, reply: [{ type: 'text', text: 'It was pelican.' }] },
    ]);
    const first = h.start();
    first.live.push('remember the word pelican');
    const r1 = await first.result();
    const sessionId = first.live.sessionId!;
    expect(r1.session_id).toBe(sessionId);
    first.live.end();
    expect((await first.live.ended).reason).toBe('closed');

    const second = h.start({ resume: sessionId });
    second.live.push('what was the word');
    const r2 = await second.result();
    expect(r2.result).toBe('It was pelican.');
    expect(r2.session_id).toBe(sessionId);
    expect(second.live.sessionId).toBe(sessionId);
    const resumed = h.double.requests.filter((r) => r.kind === 'main').at(-1)!;
    const history = JSON.stringify((resumed.body as { messages: unknown[] }).messages);
    expect(history).toContain('remember the word pelican');
    expect(history).toContain('Noted: pelican.');
    await second.record('resume');
  });

  it('ends with reason "error" and session_not_found when resuming an unknown session', async (ctx) => {
    const h = await harnessFor(ctx, []);
    const s = h.start({ resume: '3f2b6c1e-0d4a-4c8e-9b7a-5e6f7a8b9c0d' });
    s.live.push('hello?');
    const end = await s.live.ended;
    expect(end.reason).toBe('error');
    expect(end.error?.message).toBeTruthy();
    expect(end.classified?.kind).toBe('session_not_found');
    expect(end.lastResult).toMatchObject({ subtype: 'error_during_execution', is_error: true });
    expect(() => s.live.push('again')).toThrow(/has ended/);
    expect(h.double.requests.filter((r) => r.kind === 'main')).toHaveLength(0);
    await s.record('resume-unknown-session');
  });

  it('turns a dead CLI into an ended event ("cli_exit"), not a throw; pushes then fail clearly', async (ctx) => {
    const h = await harnessFor(ctx, [{ match: { text: 'hello' }, reply: [{ type: 'text', text: 'Hi.' }] }]);
    const s = h.start();
    s.live.push('hello');
    await s.result();
    const pid = await findCliPid(h.configDir);
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const end = await s.live.ended;
    expect(end.reason).toBe('cli_exit');
    expect(end.error?.message).toMatch(/SIGKILL|exited|terminated/i);
    expect(end.classified).toBeDefined();
    expect(() => s.live.push('anyone there?')).toThrow(expect.objectContaining({ code: 'live_query_ended' }));
    await expect(s.live.interrupt()).rejects.toMatchObject({ code: 'live_query_ended' });
    await s.drained;
  });

  it('close() ends at once with reason "closed", even mid-turn, and the CLI process is gone', async (ctx) => {
    const h = await harnessFor(ctx, [
      { match: { text: 'talk' }, reply: [{ type: 'text', text: 'a b c d e f g h i j k l', delayMs: 200 }] },
    ]);
    const s = h.start();
    s.live.push('talk');
    await s.waitFor((m) => m.type === 'stream_event', { what: 'a stream event' });
    const pid = await findCliPid(h.configDir);
    expect(pid).toBeDefined();
    s.live.close();
    const end = await s.live.ended;
    expect(end.reason).toBe('closed');
    expect(end.classified).toBeUndefined();
    expect(s.of('result')).toHaveLength(0);
    await ctx.expect.poll(() => findCliPid(h.configDir), { timeout: 10_000 }).toBeUndefined();
  });

  it('a second reader of messages is refused', async (ctx) => {
    const h = await harnessFor(ctx, []);
    const live = startLiveQuery({ options: h.options() });
    const session = new Session(live, h.root);
    expect(() => live.messages[Symbol.asyncIterator]()).toThrow(
      expect.objectContaining({ code: 'live_query_messages_reused' }),
    );
    live.close();
    await session.drained;
    expect((await live.ended).reason).toBe('closed');
  });
});
