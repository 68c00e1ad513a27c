import { afterEach, describe, expect, it } from 'vitest';
import { runText, startScubaWorld, type ScubaWorld } from './support/scuba-world.js';

/**
 * End to end: the real server, the real `claude-scuba` process, the real
 * Claude CLI (through the Agent SDK) and the model double.
 */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('claude-scuba end to end', () => {
  it('answers a human on the thread, streamed inside run_started / run_finished', async () => {
    const reply = 'Hello Alice, nice to meet you in this thread.';
    world = await startScubaWorld({
      script: [{ name: 'hello', match: { text: 'hi there' }, reply: [{ type: 'text', text: reply }] }],
    });
    const bot = world.startBot();
    const said = await world.say('hi there');
    const asked = said[0]!.seq;

    const events = await world.waitFor(
      (all) => all.some((e) => e.principalId === world!.botId && e.type === 'run_finished'),
      { what: "the bot's run_finished" },
    );
    const mine = events.filter((e) => e.principalId === world!.botId);
    const started = mine.find((e) => e.type === 'run_started')!;
    const runId = started.data.runId as string;
    expect(started.data.replyTo).toEqual([asked]);
    expect(runText(events, runId)).toBe(reply);
    const finished = mine.find((e) => e.type === 'run_finished')!;
    expect(finished.data).toMatchObject({ runId, status: 'completed' });
    expect(finished.data.usage).toMatchObject({ outputTokens: expect.any(Number), totalCostUsd: expect.any(Number) });
    // Every part of the run is inside its envelope.
    const parts = mine.filter((e) => e.type === 'message_part');
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      expect(part.data.runId).toBe(runId);
      expect(part.seq).toBeGreaterThan(started.seq);
      expect(part.seq).toBeLessThan(finished.seq);
    }
    // The real CLI asked the double, with Alice's words as the user text.
    expect(world.double.requests.some((r) => r.kind === 'main' && r.lastUserText.includes('hi there'))).toBe(true);
    // The logs are JSON lines carrying the ids.
    expect(
      bot.logs.some((l) => l.threadId === world!.threadId && l.principalId === world!.botId && l.runId === runId),
    ).toBe(true);
    expect(bot.logs.map((l) => JSON.stringify(l)).join('\n')).not.toContain(world.botToken);

    expect(await bot.stop()).toEqual({ code: 0, signal: null });
  });

  it('stops before anything else when the token belongs to another principal, naming both ids', async () => {
    world = await startScubaWorld({ script: [] });
    const config = world.writeConfig({}, 'bot-someone-else');
    const bot = world.startBot({ configPath: config });
    const exit = await bot.exited;
    expect(exit.code).toBe(1);
    const stderr = bot.stderr.join('');
    expect(stderr).toContain('"bot-research"');
    expect(stderr).toContain('"bot-someone-else"');
    expect(world.double.requests).toEqual([]);
  });

  it('refuses a broken config with every problem listed, exit code 2', async () => {
    world = await startScubaWorld({ script: [] });
    const config = world.writeConfig({ turns: { steer: 'yes' }, limits: { maxActiveQueries: 0 } });
    const bot = world.startBot({ configPath: config });
    expect((await bot.exited).code).toBe(2);
    const stderr = bot.stderr.join('');
    expect(stderr).toContain('has 2 problems');
    expect(stderr).toContain('turns.steer must be true or false (got "yes")');
    expect(stderr).toContain('limits.maxActiveQueries must be at least 1 (got 0)');
  });
});
