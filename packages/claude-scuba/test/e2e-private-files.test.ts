import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startScubaWorld, waitForLog, type ScubaWorld } from './support/scuba-world.js';

/** The bot's files are its user's alone (issue 28): folders 0700, the database 0600, a warning for a readable secret. */
let world: ScubaWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("the bot's own files", () => {
  it('creates its folders 0700 and its database 0600, and warns at start-up about a config or env file others may read', async () => {
    world = await startScubaWorld({ script: [{ match: { text: 'hello' }, reply: [{ type: 'text', text: 'Hi.' }] }] });
    const w = world;
    const envFile = join(w.dir, 'bot.env');
    writeFileSync(envFile, 'BOT_TOKEN=…\n', { mode: 0o644 });
    chmodSync(w.configPath, 0o644);
    const bot = w.startBot();
    await waitForLog(bot, (l) => l.msg === 'claude-scuba running', 'the bot running');
    const warnings = bot.logs.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toContain(
      `the config file ${w.configPath} is mode 0644: other users may read it; make it the bot user's alone (chmod 600 ${w.configPath})`,
    );
    expect(warnings).toContain(
      `the env file ${envFile} is mode 0644: other users may read it; make it the bot user's alone (chmod 600 ${envFile})`,
    );
    await w.say('hello');
    await w.waitFor((all) => all.some((e) => e.principalId === w.botId && e.type === 'run_finished'), {
      what: "the bot's answer",
    });
    for (const dir of ['claude-home', 'workspaces', join('workspaces', w.threadId), 'tmp'])
      expect([dir, modeOf(join(w.dir, dir))]).toEqual([dir, '700']);
    for (const file of ['state.db', 'state.db-wal', 'state.db-shm'].filter((f) => existsSync(join(w.dir, f))))
      expect([file, modeOf(join(w.dir, file))]).toEqual([file, '600']);
    expect(existsSync(join(w.dir, 'state.db-wal'))).toBe(true);
    await bot.stop();

    // Made private, they are not warned about again.
    chmodSync(w.configPath, 0o600);
    chmodSync(envFile, 0o600);
    const again = w.startBot();
    await waitForLog(again, (l) => l.msg === 'claude-scuba running', 'the bot running again');
    expect(again.logs.filter((l) => l.level === 40 && String(l.msg).includes('other users may read it'))).toEqual([]);
  }, 60_000);
});
