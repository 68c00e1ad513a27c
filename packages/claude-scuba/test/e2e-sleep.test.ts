import { afterEach, describe, expect, it } from 'vitest';
import { runText, startScubaWorld, waitForLog, type ScubaWorld } from './support/scuba-world.js';
import { botRuns, quickRule } from './support/turn-helpers.js';

/**
 * Idle threads cost next to nothing (issue 19): a thread's session is made on the first event it
 * must see and dropped once nothing is under way there; a restart leaves idle threads asleep.
 * The real server, the real `claude-scuba` process, the real CLI and the model double.
 */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const asleep = (threadId: string) => (l: Record<string, unknown>) =>
  l.msg === 'thread asleep' && l.threadId === threadId;
const awake = (threadId: string) => (l: Record<string, unknown>) => l.msg === 'thread awake' && l.threadId === threadId;

describe('a thread with nothing under way', () => {
  it('falls asleep, wakes on the next message and answers it in the same Claude session; a restart leaves it asleep', async () => {
    world = await startScubaWorld({
      script: [quickRule('first question', 'First answer.', 'always'), quickRule('second question', 'Second answer.')],
    });
    const w = world;
    const config = w.writeConfig({ limits: { idleQueryTimeoutSeconds: 1, idleStateSeconds: 1 } });
    let bot = w.startBot({ configPath: config });
    await w.say('first question');
    await w.waitFor((all) => botRuns(w, all).length === 1 && all.at(-1)?.type === 'run_finished', {
      what: 'the first answer',
    });
    // The CLI closes after a second idle, the session a second after that.
    await waitForLog(bot, asleep(w.threadId), 'the thread asleep');
    const wakes = bot.logs.filter(awake(w.threadId)).length;

    await w.say('second question');
    const events = await w.waitFor((all) => botRuns(w, all).length === 2 && all.at(-1)?.type === 'run_finished', {
      what: 'the second answer',
    });
    const runs = botRuns(w, events);
    expect(runText(events, runs[0]!)).toBe('First answer.');
    expect(runText(events, runs[1]!)).toBe('Second answer.');
    expect(bot.logs.filter(awake(w.threadId)).length).toBe(wakes + 1);
    // The new session's query resumed the Claude session the first one stored.
    // (The first may be opened on a spare CLI: a new thread has nothing to resume.)
    const opened = bot.logs.filter(
      (l) => String(l.msg).startsWith('opening the Claude query') && l.threadId === w.threadId,
    );
    expect(opened).toHaveLength(2);
    expect(opened[0]!.resume).toBeUndefined();
    expect(opened[1]!.resume).toEqual(expect.any(String));

    // Asleep again, then a restart: the thread is followed, and stays asleep until someone writes.
    await waitForLog(
      bot,
      (l) => asleep(w.threadId)(l) && bot.logs.filter(asleep(w.threadId)).length >= 2,
      'asleep again',
    );
    await bot.stop();
    bot = w.startBot({ configPath: config });
    await waitForLog(bot, (l) => l.msg === 'following every thread' && l.threads === 1, 'the restarted bot following');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(bot.logs.filter(awake(w.threadId))).toHaveLength(0);
    await w.say('first question');
    await waitForLog(bot, awake(w.threadId), 'the thread woken by a message');
    await w.waitFor((all) => botRuns(w, all).length === 3 && all.at(-1)?.type === 'run_finished', {
      what: 'the answer after the restart',
    });
  }, 90_000);
});
