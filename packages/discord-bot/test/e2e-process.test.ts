/** The binary: `bubble-discord --config <file>` as an operator runs it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startModelDouble, type ModelDouble } from '@bubble/model-double';
import { afterEach, describe, expect, it } from 'vitest';
import { startDiscordDouble, type DiscordDouble } from './support/discord-double.js';
import { ALICE, ALICE_TOKEN, APP_ID, CHANNEL_ID, GUILD_ID } from './support/harness.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'bubble-discord.js');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function run(
  configFile: string,
  env: Record<string, string>,
): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [BIN, '--config', configFile], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, output: () => output, exited };
}

async function waitFor(check: () => boolean, label: string, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('bubble-discord binary', () => {
  it('exits 2 with every config problem listed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bubble-discord-bin-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'config.json');
    await writeFile(
      file,
      JSON.stringify({
        discord: { applicationId: 'not-digits', token: { env: 'MISSING_TOKEN' } },
        limits: { maxConcurrentRuns: 0 },
      }),
    );
    const proc = run(file, {});
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('discord.applicationId must be a Discord id');
    expect(proc.output()).toContain('secretsKey is missing');
    expect(proc.output()).toContain('limits.maxConcurrentRuns must be at least 1');
  });

  it('runs against a Discord-compatible endpoint, its files its own (0700/0600), and SIGTERM during a run stops it within 5 s', async () => {
    const model: ModelDouble = await startModelDouble({
      script: [{ reply: [{ type: 'text', text: 'a very slow answer that will not finish', delayMs: 2_000 }] }],
    });
    const discord: DiscordDouble = await startDiscordDouble({
      applicationId: APP_ID,
      guilds: [{ id: GUILD_ID, name: 'Test guild', channels: [{ id: CHANNEL_ID, name: 'general' }] }],
    });
    const dir = await mkdtemp(join(tmpdir(), 'bubble-discord-bin-'));
    cleanups.push(async () => {
      await discord.close();
      await model.close();
      await rm(dir, { recursive: true, force: true });
    });
    const file = join(dir, 'config.json');
    await writeFile(
      file,
      JSON.stringify({
        discord: {
          token: { env: 'DISCORD_BOT_TOKEN' },
          applicationId: APP_ID,
          apiUrl: discord.apiUrl,
          guildIds: [GUILD_ID],
        },
        secretsKey: { env: 'BUBBLE_DISCORD_SECRETS_KEY' },
        claude: { model: 'claude-sonnet-4-5', configDir: './.discord/claude', workspaceRoot: './.discord/workspaces' },
        limits: { maxConcurrentRuns: 2 },
        store: { path: './.discord/state.db' },
        logger: { level: 'info', pretty: false },
      }),
    );
    // An env file others may read, beside the config: the bot warns about it.
    await writeFile(join(dir, 'bot.env'), 'DISCORD_BOT_TOKEN=x\n', { mode: 0o644 });
    await chmod(join(dir, 'bot.env'), 0o644);
    // The usual umask, under which files and folders would be readable by everyone.
    const umask = process.umask(0o022);
    const proc = run(file, {
      DISCORD_BOT_TOKEN: 'discord-bot-token-test',
      BUBBLE_DISCORD_SECRETS_KEY: randomBytes(32).toString('hex'),
      ANTHROPIC_BASE_URL: model.url,
    });
    process.umask(umask);
    await waitFor(() => proc.output().includes('bubble-discord running'), 'the bot to start');
    expect(
      discord
        .commands(GUILD_ID)
        .map((c) => (c as { name: string }).name)
        .sort(),
    ).toEqual(['ask', 'link', 'link-github', 'mode', 'model', 'reset', 'unlink']);
    const link = discord.slashCommand({ channelId: CHANNEL_ID, user: ALICE, name: 'link' });
    const modal = await discord.waitFor(() => link.callbacks[0]);
    const submit = discord.submitModal({
      channelId: CHANNEL_ID,
      user: ALICE,
      customId: modal.data.custom_id as string,
      fields: { token: ALICE_TOKEN },
    });
    await discord.waitFor(() => submit.callbacks[0]);
    const message = discord.postMessage({
      channelId: CHANNEL_ID,
      author: ALICE,
      content: `<@${discord.bot.id}> hello`,
      mentions: [discord.bot],
    });
    await model.waitForRequest((r) => r.kind === 'main', { timeoutMs: 20_000 });
    const modeOf = async (path: string) => ((await stat(join(dir, path))).mode & 0o777).toString(8);
    const workspaces = await readdir(join(dir, '.discord/workspaces'));
    expect(workspaces.length).toBeGreaterThan(0);
    expect({
      store: await modeOf('.discord/state.db'),
      workspaces: await modeOf('.discord/workspaces'),
      thread: await modeOf(join('.discord/workspaces', workspaces[0]!)),
    }).toEqual({ store: '600', workspaces: '700', thread: '700' });
    expect(proc.output()).toContain(`the env file ${join(dir, 'bot.env')} is mode 0644`);
    const started = Date.now();
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    const thread = discord.threads().find((t) => t.fromMessageId === message.id)!;
    const said = discord
      .messages(thread.id)
      .filter((m) => m.author.id === discord.bot.id)
      .map((m) => m.content)
      .join('\n');
    expect(said).toContain('restarting');
    expect(discord.reactions(message.id)).not.toContain('✅');
    expect(proc.output()).not.toContain(ALICE_TOKEN);
  });
});
