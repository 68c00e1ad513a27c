/**
 * End-to-end harness: the real bot (in this process) with the real discord.js
 * against the Discord double, and the real Agent SDK with its CLI against the
 * model double. Each harness has its own temp folder (config, store, CLI home,
 * workspaces) and its own ports.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startModelDouble, type ModelDouble, type RecordedRequest, type Script } from '@bubble/model-double';
import { pino, type Logger } from 'pino';
import { startDiscordBot, type DiscordBot } from '../../src/bot.js';
import { loadConfigFile, type DiscordBotConfig } from '../../src/config/config.js';
import { speakerMessage } from '../../src/discord/message-prompt.js';
import { startDiscordDouble, type DiscordDouble, type DoubleMessage, type DoubleUser } from './discord-double.js';

export const APP_ID = '123';
export const GUILD_ID = '456';
export const CHANNEL_ID = '1000';
export const ALICE: DoubleUser = { id: '2001', username: 'alice', globalName: 'Alice' };
export const BOB: DoubleUser = { id: '2002', username: 'bob', globalName: 'Bob' };
export const CAROL: DoubleUser = { id: '2003', username: 'carol', globalName: 'Carol' };
export const OTHER_BOT: DoubleUser = { id: '2999', username: 'otherbot', bot: true };
export const ALICE_TOKEN = `sk-ant-oat01-alice-${'a'.repeat(40)}`;
export const BOB_TOKEN = `sk-ant-oat01-bob-${'b'.repeat(40)}`;

export interface HarnessOptions {
  script?: Script;
  /** Changes to the config file's JSON before it is written. */
  config?: (file: Record<string, any>) => void;
  editIntervalMs?: number;
  /** Lines the bot logs, for tests that read them (warnings, error refs). */
  logLines?: Array<Record<string, unknown>>;
  /** Guilds the bot is in besides the test guild (not in guildIds unless `config` adds them). */
  otherGuilds?: Array<{ id: string; name: string; channels: Array<{ id: string; name: string }> }>;
}

export interface Harness {
  discord: DiscordDouble;
  model: ModelDouble;
  bot: DiscordBot;
  config: DiscordBotConfig;
  dir: string;
  configFile: string;
  env: Record<string, string>;
  logLines: Array<Record<string, unknown>>;
  /** `/link` and the modal, as the user would; resolves once the bot answered the modal. */
  link(user: DoubleUser, token: string, kind?: 'claude' | 'github'): Promise<string>;
  /** A message mentioning the bot in the guild channel; resolves with the thread the bot starts from it. */
  mention(
    user: DoubleUser,
    text: string,
    extra?: { attachments?: Parameters<DiscordDouble['postMessage']>[0]['attachments'] },
  ): Promise<{ message: DoubleMessage; threadId: string }>;
  say(threadId: string, user: DoubleUser, text: string): DoubleMessage;
  /** Waits until the bot put ✅ or ⚠️ on the message (its turn ended); which one. */
  settled(message: DoubleMessage, timeoutMs?: number): Promise<'✅' | '⚠️'>;
  /** The bot's messages in a channel, after (not including) a message id. */
  botMessages(channelId: string, afterId?: string): DoubleMessage[];
  /** The bot's reply text in a thread after a message (its messages' contents joined by "\n"). */
  replyText(channelId: string, afterId?: string): string;
  /** Main-loop requests the model double received (not title or other calls). */
  mainRequests(): RecordedRequest[];
  /** Stops the bot and starts a new one on the same folder and doubles; `change` edits its env and config file first. */
  restart(change?: { env?: Record<string, string>; config?: (file: Record<string, any>) => void }): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'bubble-discord-'));
  const model = await startModelDouble(options.script === undefined ? {} : { script: options.script });
  const discord = await startDiscordDouble({
    applicationId: APP_ID,
    guilds: [
      { id: GUILD_ID, name: 'Test guild', channels: [{ id: CHANNEL_ID, name: 'general' }] },
      ...(options.otherGuilds ?? []),
    ],
  });
  const file: Record<string, any> = {
    discord: {
      token: { env: 'DISCORD_BOT_TOKEN' },
      applicationId: APP_ID,
      apiUrl: discord.apiUrl,
      guildIds: [GUILD_ID],
    },
    secretsKey: { env: 'BUBBLE_DISCORD_SECRETS_KEY' },
    claude: {
      model: 'claude-sonnet-4-5',
      configDir: './.discord/claude',
      workspaceRoot: './.discord/workspaces',
      maxRetries: 0,
    },
    limits: { maxConcurrentRuns: 2 },
    store: { path: './.discord/state.db' },
    logger: { level: 'info', pretty: false },
  };
  options.config?.(file);
  const configFile = join(dir, 'bubble-discord.json');
  await writeFile(configFile, JSON.stringify(file, null, 2));
  const env: Record<string, string> = {
    DISCORD_BOT_TOKEN: 'discord-bot-token-test',
    BUBBLE_DISCORD_SECRETS_KEY: randomBytes(32).toString('hex'),
    BUBBLE_DISCORD_DASHBOARD_TOKEN: 'dashboard-token-test',
    ANTHROPIC_BASE_URL: model.url,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
  };
  let { config } = loadConfigFile(configFile, { env });
  const logLines = options.logLines ?? [];
  const logger: Logger = pino(
    { level: 'debug' },
    { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const boot = () =>
    startDiscordBot({
      config,
      logger,
      childPath: env.PATH!,
      isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
      configPath: configFile,
      editIntervalMs: options.editIntervalMs ?? 250,
    });
  let bot = await boot();

  const isBot = (m: DoubleMessage) => m.author.id === discord.bot.id;
  const harness: Harness = {
    discord,
    model,
    get bot() {
      return bot;
    },
    get config() {
      return config;
    },
    dir,
    configFile,
    env,
    logLines,
    async link(user, token, kind = 'claude') {
      const command = discord.slashCommand({
        channelId: CHANNEL_ID,
        user,
        name: kind === 'claude' ? 'link' : 'link-github',
      });
      const modal = await discord.waitFor(() => command.callbacks.find((c) => c.type === 9), {
        label: 'the /link modal',
      });
      const submit = discord.submitModal({
        channelId: CHANNEL_ID,
        user,
        customId: modal.data.custom_id as string,
        fields: { token },
      });
      const answer = await discord.waitFor(() => submit.callbacks[0], { label: 'the answer to the modal' });
      return String(answer.data?.content ?? '');
    },
    async mention(user, text, extra = {}) {
      const message = discord.postMessage({
        channelId: CHANNEL_ID,
        author: user,
        content: `<@${discord.bot.id}> ${text}`,
        mentions: [discord.bot],
        ...(extra.attachments === undefined ? {} : { attachments: extra.attachments }),
      });
      const thread = await discord.waitFor(() => discord.threads().find((t) => t.fromMessageId === message.id), {
        label: `a thread from "${text}"`,
      });
      return { message, threadId: thread.id };
    },
    say(threadId, user, text) {
      return discord.postMessage({ channelId: threadId, author: user, content: text });
    },
    async settled(message, timeoutMs = 60_000) {
      return discord.waitFor(
        () => discord.reactions(message.id).find((r): r is '✅' | '⚠️' => r === '✅' || r === '⚠️'),
        {
          timeoutMs,
          label: `the end of the turn for "${message.content}"`,
        },
      );
    },
    botMessages(channelId, afterId) {
      const all = discord.messages(channelId);
      const start = afterId === undefined ? 0 : all.findIndex((m) => m.id === afterId) + 1;
      return all.slice(start).filter(isBot);
    },
    replyText(channelId, afterId) {
      return harness
        .botMessages(channelId, afterId)
        .map((m) => m.content)
        .join('\n');
    },
    mainRequests() {
      return model.requests.filter((r) => r.kind === 'main');
    },
    async restart(change = {}) {
      await bot.stop();
      Object.assign(env, change.env);
      if (change.config !== undefined) {
        change.config(file);
        await writeFile(configFile, JSON.stringify(file, null, 2));
      }
      config = loadConfigFile(configFile, { env }).config;
      bot = await boot();
    },
    async close() {
      await bot.stop().catch(() => undefined);
      await discord.close();
      await model.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** The bearer token a model request was made with (the CLI sends an OAuth token as `Authorization: Bearer`). */
export function requestToken(request: RecordedRequest): string | undefined {
  const header = request.headers.authorization;
  const value = Array.isArray(header) ? header[0] : header;
  if (typeof value === 'string' && value.startsWith('Bearer ')) return value.slice('Bearer '.length);
  const key = request.headers['x-api-key'];
  return typeof key === 'string' ? `x-api-key:${key}` : undefined;
}

/** A message of `user` as the bot's prompt carries it (the double users' display name is their globalName). */
export function said(user: DoubleUser, text: string): string {
  return speakerMessage({ senderId: user.id, senderName: user.globalName ?? user.username, text });
}
