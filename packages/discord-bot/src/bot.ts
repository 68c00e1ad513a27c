import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  isInside,
  makePrivateDir,
  probeSandbox,
  readableByOthers,
  secretFileModes,
  toolchainReadPaths,
  type ToolIsolation,
} from '@bubble/engine';
import {
  ChannelType,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  MessageFlags,
  MessageType,
  PermissionFlagsBits,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type Guild,
  type Interaction,
  type Message,
  type ModalSubmitInteraction,
  type ThreadChannel,
} from 'discord.js';
import type { Logger } from 'pino';
import type { DiscordBotConfig } from './config/config.js';
import { startDashboard, type Dashboard } from './dashboard/dashboard-server.js';
import { ButtonApprovals, type ApprovalChannel } from './discord/button-approvals.js';
import { commandDefinitions } from './discord/commands.js';
import { buildPrompt, promptText, threadName } from './discord/message-prompt.js';
import { DiscordBotError } from './errors.js';
import { ReplyStream, type ReplyTarget } from './reply/reply-stream.js';
import { RunManager } from './runs/run-manager.js';
import { runTurn, type TurnEnvironment } from './runs/turn-runner.js';
import type { TurnKind } from './runs/turn-options.js';
import { failureNotice } from './runs/user-messages.js';
import { SecretBox } from './secrets/secret-box.js';
import { looksLikeClaudeToken, TokenVault } from './secrets/token-vault.js';
import { StateStore, type ThreadSession } from './store/state-store.js';
import { describeChanges, diffSnapshots, EMPTY_SNAPSHOT } from './workspace/workspace-changes.js';
import { parseSnapshot, serializeSnapshot, takeSnapshot } from './workspace/workspace-snapshot.js';
import type { UserContent } from '@bubble/engine';
import type { CanUseTool } from '@anthropic-ai/claude-agent-sdk';

export interface BotOptions {
  config: DiscordBotConfig;
  logger: Logger;
  /** PATH for the CLI child (main.ts passes its own). */
  childPath: string;
  isRoot: boolean;
  /** The config file, whose folder no tool may read. */
  configPath?: string;
  /** The bot user's home, out of every tool's reach. */
  home?: string;
  /** Between two edits of a streamed reply (tests shorten it). */
  editIntervalMs?: number;
  /** How long SIGTERM waits for runs to stop before the client goes anyway. */
  stopTimeoutMs?: number;
}

export interface DiscordBot {
  readonly client: Client;
  readonly runs: RunManager;
  readonly dashboardUrl: string | undefined;
  /** Stops runs, the gateway, the dashboard and the store. */
  stop(): Promise<void>;
}

const LINK_MODAL = 'bubble-link';
const NOT_LINKED =
  'To talk to me, link your own Claude Code token first: run `claude setup-token` on your ' +
  'machine, then use `/link` here and paste it into the form (never into a channel). Each ' +
  "person's messages run on their own token.";
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:\-[\]]{0,99}$/;

/** Starts the bot: the store, the sandbox check, the Discord client, the slash commands, the dashboard. */
export async function startDiscordBot(options: BotOptions): Promise<DiscordBot> {
  const { config, logger } = options;
  warnIfTemporary(config, logger);
  // Its files are its Unix user's alone (README, "One Unix user per bot"): folders 0700, the store 0600.
  for (const warning of readableByOthers(secretFileModes(options.configPath, []))) logger.warn(warning);
  makePrivateDir(config.claude.workspaceRoot);
  const store = StateStore.open(config.store.path);
  const box = SecretBox.fromKey(config.secretsKey.reveal());
  const previousBoxes = config.previousSecretsKeys.map((key) => SecretBox.fromKey(key.reveal()));
  if ([box, ...previousBoxes].some((b) => b.keyKind === 'passphrase'))
    logger.warn(
      'secretsKey or a previousSecretsKeys entry is a passphrase (derived with scrypt); a random 32-byte key is better: openssl rand -hex 32',
    );
  const vault = new TokenVault(store, box, previousBoxes);
  const resealed = vault.resealAll();
  if (resealed.resealed > 0)
    logger.info(
      { tokens: resealed.resealed, keyId: box.keyId },
      `${resealed.resealed} linked token(s) sealed with a previous key were sealed again with secretsKey`,
    );
  for (const lost of resealed.unreadable)
    logger.error(
      { userId: lost.userId, kind: lost.kind, reason: lost.reason },
      `the ${lost.kind} token of user ${lost.userId} opens with neither secretsKey nor previousSecretsKeys; they must /link again`,
    );

  const isolation = await planIsolation(options);
  if (isolation.kind !== 'sandbox')
    logger.warn(
      { reason: isolation.kind === 'unavailable' ? isolation.reason : 'off' },
      "agentic mode is unavailable: its tools run only in Claude Code's sandbox",
    );

  const runs = new RunManager({
    maxConcurrentRuns: config.limits.maxConcurrentRuns,
    maxRunSeconds: config.limits.maxRunSeconds,
    logger,
  });
  const approvals = new ButtonApprovals({ store, timeoutMs: config.claude.approvalTimeoutSeconds * 1000, logger });
  const turnEnv: TurnEnvironment = {
    childPath: options.childPath,
    configDir: config.claude.configDir,
    tmpRoot: tmpRootOf(config),
    baseUrl: config.claude.baseUrl,
    maxRetries: config.claude.maxRetries,
    isRoot: options.isRoot,
    isolation,
    approvals: config.claude.approvals,
    model: config.claude.model,
    chatPrompt: config.claude.chatPrompt,
    agenticAppend: config.claude.agenticAppend,
    logger,
  };

  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.GuildMessageReactions,
    ],
    rest: { api: config.discord.apiUrl },
    allowedMentions: { parse: [] },
  });
  const botId = (): string => client.user!.id;

  const replyIn = (thread: ThreadChannel, senderId: string): ReplyTarget => ({
    send: async (content) => (await thread.send({ content, allowedMentions: { users: [senderId] } })).id,
    edit: async (id, content) => {
      await thread.messages.edit(id, { content, allowedMentions: { users: [senderId] } });
    },
    typing: () => thread.sendTyping(),
    remove: async (id) => {
      await thread.messages.delete(id);
    },
    isGone,
  });

  const newReply = (target: ReplyTarget): ReplyStream =>
    new ReplyStream(target, {
      logger,
      editIntervalMs: options.editIntervalMs,
    });

  /** One turn of a thread's session, billed to `sender` (whose token is read again when the run starts: /unlink may come first). */
  const startTurn = (thread: ThreadChannel, session: ThreadSession, message: Message): void => {
    const sender = message.author;
    const reply = newReply(replyIn(thread, sender.id));
    const senderName = message.member?.displayName ?? sender.displayName;
    const kind: TurnKind = session.mode;
    const { done } = runs.submit(
      {
        kind,
        threadId: thread.id,
        threadName: thread.name,
        guildId: thread.guildId,
        userId: sender.id,
        userName: senderName,
      },
      reply,
      async (signal) => {
        const prompt = await buildPrompt(
          {
            content: message.content,
            senderId: sender.id,
            senderName,
            mentions: [...message.mentions.users.values()].map((u) => ({ id: u.id, name: u.displayName })),
            attachments: [...message.attachments.values()].map((a) => ({
              url: a.url,
              name: a.name,
              contentType: a.contentType,
              size: a.size,
            })),
          },
          { botId: botId(), maxImageBytes: config.limits.maxImageBytes, maxImages: config.limits.maxImages, logger },
        );
        const current = store.thread(thread.id) ?? session;
        const claudeToken = linkedClaudeToken(sender.id);
        if (claudeToken === undefined) {
          await reply.finish({
            ok: false,
            notice: `<@${sender.id}>, your token was unlinked before this reply could start. ${NOT_LINKED}`,
          });
          return;
        }
        const github = vault.lookup(sender.id, 'github');
        const channel: ApprovalChannel = {
          post: async (content, components) =>
            (
              await thread.send({
                content,
                components: components as never,
                allowedMentions: { users: [sender.id] },
              })
            ).id,
          edit: async (id, content) => {
            await thread.messages.edit(id, { content, components: [] });
          },
        };
        const agentic = current.mode === 'agentic';
        if (agentic && !(await othersChangesAccepted(thread.id, sender.id, current.cwd, channel, signal, reply)))
          return;
        const canUseTool: CanUseTool | undefined =
          agentic && config.claude.approvals === 'buttons'
            ? approvals.gate({ threadId: thread.id, senderId: sender.id, channel })
            : undefined;
        try {
          await converse(reply, signal, {
            kind: current.mode,
            cwd: current.cwd,
            // Each sender's own temp folder in the thread: nothing one person's turn leaves there reaches another's.
            tmpKey: join(thread.id, sender.id),
            session: current,
            senderId: sender.id,
            claudeToken,
            githubToken: github.status === 'linked' ? github.token : undefined,
            prompt,
            canUseTool,
          });
        } finally {
          // What this sender's turn left is theirs: only later changes by others are shown to them.
          if (agentic) store.setSeenWorkspace(thread.id, sender.id, serializeSnapshot(takeSnapshot(current.cwd)));
        }
      },
    );
    void done.then(async () => {
      const ok = reply.succeeded;
      await message.react(ok ? '✅' : '⚠️').catch((error: unknown) => logger.debug({ err: error }, 'reaction failed'));
    });
  };

  /**
   * Issue 28 §3: before an agentic turn in a shared workspace, the files other people's turns changed since this
   * sender's last turn there are listed, and the turn runs only after the sender's "Run my turn". False: it must not run
   * (the reply is finished here).
   */
  const othersChangesAccepted = async (
    threadId: string,
    senderId: string,
    cwd: string,
    channel: ApprovalChannel,
    signal: AbortSignal,
    reply: ReplyStream,
  ): Promise<boolean> => {
    const seenData = store.seenWorkspace(threadId, senderId);
    const seen = seenData === undefined ? EMPTY_SNAPSHOT : parseSnapshot(seenData);
    const now = takeSnapshot(cwd);
    const changes = diffSnapshots(seen, now);
    if (changes.length === 0 && !now.truncated) return true;
    const text =
      `📂 <@${senderId}>, since your last turn here other people's turns changed ${changes.length} file(s) in this ` +
      `thread's workspace. Your turn may read or run them, with your tokens; check them first:\n` +
      describeChanges(changes, now.truncated);
    const answer = await approvals.confirmChanges({ senderId, text, channel, signal });
    if (answer === 'run') return true;
    await reply.finish({
      ok: false,
      notice:
        answer === 'stopped'
          ? typeof signal.reason === 'string'
            ? signal.reason
            : 'Stopped.'
          : answer === 'timeout'
            ? `Not run: no answer within ${config.claude.approvalTimeoutSeconds} s to the list of changed files.`
            : answer === 'unshown'
              ? 'Not run: the list of changed files could not be shown.'
              : 'Cancelled: your turn did not run.',
    });
    return false;
  };

  /** Runs a turn and turns its outcome into the reply's end (and the stored session). */
  const converse = async (
    reply: ReplyStream,
    signal: AbortSignal,
    turn: {
      kind: TurnKind;
      cwd: string;
      tmpKey: string;
      session: ThreadSession | undefined;
      senderId: string;
      claudeToken: string;
      githubToken: string | undefined;
      prompt: UserContent;
      canUseTool: CanUseTool | undefined;
    },
  ): Promise<void> => {
    reply.startTyping();
    const log = logger.child({ threadId: turn.session?.threadId, userId: turn.senderId, kind: turn.kind });
    const outcome = await runTurn(
      { ...turnEnv, logger: log },
      {
        kind: turn.kind,
        cwd: turn.cwd,
        tmpKey: turn.tmpKey,
        claudeToken: turn.claudeToken,
        githubToken: turn.githubToken,
        prompt: turn.prompt,
        model: turn.session?.model ?? undefined,
        resume: turn.kind === 'ask' ? undefined : (turn.session?.sessionId ?? undefined),
        canUseTool: turn.canUseTool,
        signal,
        onText: (delta) => reply.append(delta),
        onTool: (name) => reply.setStatus(`🔧 Using ${name}…`),
        onSessionLost: () => {
          if (turn.session !== undefined) store.setSessionId(turn.session.threadId, null);
        },
      },
    );
    if (outcome.status === 'ok') {
      if (turn.session !== undefined && turn.kind !== 'ask' && outcome.sessionId !== undefined && outcome.transcript) {
        store.setSessionId(turn.session.threadId, outcome.sessionId);
      }
      await reply.finish({ ok: true });
      return;
    }
    if (outcome.status === 'aborted') {
      await reply.finish({ ok: false, notice: typeof signal.reason === 'string' ? signal.reason : 'Stopped.' });
      return;
    }
    const ref = Math.random().toString(36).slice(2, 8);
    const notice = failureNotice(outcome.classified, turn.senderId, ref);
    log.error(
      { ref, kind: outcome.classified.kind, detail: outcome.classified.detail },
      `a turn failed: ${outcome.classified.message}`,
    );
    await reply.finish({ ok: false, notice: notice.text });
  };

  const guildIds = config.discord.guildIds === undefined ? undefined : new Set(config.discord.guildIds);
  /** Only the configured guilds (issue 28 §9); with no list, every guild. A DM is no guild. */
  const servesGuild = (guildId: string | null): boolean =>
    guildIds === undefined || (guildId !== null && guildIds.has(guildId));
  /** With `leaveOtherGuilds`: a guild not in the list is left, at start and when the bot is added to it. */
  const leaveIfForeign = async (guild: Guild): Promise<void> => {
    if (!config.discord.leaveOtherGuilds || servesGuild(guild.id)) return;
    try {
      await guild.leave();
      logger.warn({ guildId: guild.id, guildName: guild.name }, 'left a guild that is not in discord.guildIds');
    } catch (error) {
      logger.error({ err: error, guildId: guild.id }, 'could not leave a guild that is not in discord.guildIds');
    }
  };

  let stopping = false;
  const onMessage = async (message: Message): Promise<void> => {
    if (stopping || client.user === null || message.author.id === client.user.id) return;
    // Only what people write: a thread rename, a pin or a join is a message too, and must not start a turn.
    if (message.type !== MessageType.Default && message.type !== MessageType.Reply) return;
    if ((message.author.bot || message.webhookId !== null) && !config.discord.allowBots) return;
    if (!message.inGuild() || !servesGuild(message.guildId)) return;
    const channel = message.channel;
    if (channel.isThread()) {
      const session = store.thread(channel.id);
      if (session === undefined) return;
      if (linkedClaudeToken(message.author.id) === undefined) {
        await message.reply({ content: notLinkedNotice(message.author.id), allowedMentions: { repliedUser: true } });
        return;
      }
      await message.react('👀').catch((error: unknown) => logger.debug({ err: error }, 'reaction failed'));
      startTurn(channel, session, message);
      return;
    }
    if (channel.type !== ChannelType.GuildText || !message.mentions.users.has(client.user.id)) return;
    if (linkedClaudeToken(message.author.id) === undefined) {
      await message.reply({ content: notLinkedNotice(message.author.id), allowedMentions: { repliedUser: true } });
      return;
    }
    await message.react('👀').catch((error: unknown) => logger.debug({ err: error }, 'reaction failed'));
    const thread = await message.startThread({
      name: threadName(message.content, client.user.id),
      autoArchiveDuration: 1440,
    });
    const session = store.createThread({
      threadId: thread.id,
      cwd: join(config.claude.workspaceRoot, thread.id),
      mode: 'chat',
      createdBy: message.author.id,
      guildId: message.guildId,
    });
    logger.info({ threadId: thread.id, userId: message.author.id }, 'thread started');
    startTurn(thread, session, message);
  };

  const linkedClaudeToken = (userId: string): string | undefined => {
    const found = vault.lookup(userId, 'claude');
    if (found.status === 'unreadable')
      logger.warn({ userId, reason: found.reason }, 'a linked token cannot be opened; the user must /link again');
    return found.status === 'linked' ? found.token : undefined;
  };

  /** Why this user cannot talk to the bot: no token, or one that no configured key opens. */
  const notLinkedNotice = (userId: string): string =>
    vault.lookup(userId, 'claude').status === 'unreadable'
      ? "The Claude Code token you linked can no longer be opened (this bot's key changed). Nothing ran. " +
        'Run `claude setup-token` again and use `/link` to paste it.'
      : NOT_LINKED;

  const ephemeral = (interaction: ChatInputCommandInteraction | ModalSubmitInteraction, content: string) =>
    interaction.reply({ content, flags: MessageFlags.Ephemeral });

  /** The thread a command was used in, if the bot started it; otherwise it answers why not. */
  const ownThread = async (
    interaction: ChatInputCommandInteraction,
    needsControl: boolean,
  ): Promise<ThreadSession | undefined> => {
    const session = interaction.channelId === null ? undefined : store.thread(interaction.channelId);
    if (session === undefined) {
      await ephemeral(
        interaction,
        `Use /${interaction.commandName} in a thread I started (mention me in a channel to start one).`,
      );
      return undefined;
    }
    const canManage = interaction.memberPermissions?.has(PermissionFlagsBits.ManageThreads) ?? false;
    if (needsControl && interaction.user.id !== session.createdBy && !canManage) {
      await ephemeral(
        interaction,
        `Only <@${session.createdBy}>, who started this thread, or someone who can manage threads can use /${interaction.commandName} here.`,
      );
      return undefined;
    }
    return session;
  };

  const onCommand = async (interaction: ChatInputCommandInteraction): Promise<void> => {
    switch (interaction.commandName) {
      case 'link':
      case 'link-github': {
        const kind = interaction.commandName === 'link' ? 'claude' : 'github';
        await interaction.showModal({
          custom_id: `${LINK_MODAL}:${kind}`,
          title: kind === 'claude' ? 'Link your Claude Code token' : 'Link a GitHub token',
          components: [
            {
              type: 1,
              components: [
                {
                  type: 4,
                  custom_id: 'token',
                  style: 1,
                  label: kind === 'claude' ? 'Output of `claude setup-token`' : 'GitHub token (for agentic mode)',
                  placeholder: kind === 'claude' ? 'sk-ant-oat…' : 'github_pat_…',
                  required: true,
                  min_length: 10,
                  max_length: 4000,
                },
              ],
            },
          ],
        });
        return;
      }
      case 'unlink': {
        const removed = vault.unlink(interaction.user.id);
        const stopped = runs.abortUser(interaction.user.id, 'Stopped: the token this reply ran on was unlinked.');
        await ephemeral(
          interaction,
          removed > 0
            ? `Your tokens are removed from this bot${stopped > 0 ? ', and your running replies were stopped' : ''}.`
            : 'You had no linked tokens.',
        );
        return;
      }
      case 'mode': {
        const session = await ownThread(interaction, true);
        if (session === undefined) return;
        const mode = interaction.options.getString('mode', true);
        if (mode !== 'chat' && mode !== 'agentic') {
          await ephemeral(interaction, 'The mode is "chat" or "agentic".');
          return;
        }
        if (mode === 'agentic' && isolation.kind !== 'sandbox') {
          const why =
            isolation.kind === 'unavailable'
              ? `Claude Code's sandbox cannot start on its machine (${isolation.reason})`
              : 'its operator turned it off';
          await ephemeral(interaction, `Agentic mode is not available on this bot: ${why}.`);
          return;
        }
        store.setMode(session.threadId, mode);
        await interaction.reply({
          content:
            mode === 'agentic'
              ? `Mode: **agentic**, set by <@${interaction.user.id}>. Claude may read and write files and ` +
                `run commands in this thread's sandboxed workspace, shared by everyone here. Before your turn runs, ` +
                `I list the files other people's turns changed since yours.`
              : `Mode: **chat**, set by <@${interaction.user.id}>. Claude may search and read the web.`,
        });
        return;
      }
      case 'model': {
        const session = await ownThread(interaction, true);
        if (session === undefined) return;
        const model = interaction.options.getString('model', true).trim();
        if (model !== 'default' && !MODEL_NAME.test(model)) {
          await ephemeral(
            interaction,
            'That is not a model name (letters, digits, ".", "-", ":" and "_", up to 100 characters).',
          );
          return;
        }
        store.setModel(session.threadId, model === 'default' ? null : model);
        await interaction.reply({
          content: model === 'default' ? `Model: the bot's default.` : `Model for this thread: \`${model}\`.`,
        });
        return;
      }
      case 'reset': {
        const session = await ownThread(interaction, true);
        if (session === undefined) return;
        const stopped = runs.abortThread(session.threadId, `Stopped by /reset from ${interaction.user.displayName}.`);
        store.resetThread(session.threadId);
        await interaction.reply({
          content:
            `Session reset by <@${interaction.user.id}>${stopped > 0 ? ' (the running reply was stopped)' : ''}: ` +
            "the next message starts a new conversation. The workspace's files stay.",
        });
        return;
      }
      case 'ask': {
        const token = linkedClaudeToken(interaction.user.id);
        if (token === undefined) {
          await ephemeral(interaction, notLinkedNotice(interaction.user.id));
          return;
        }
        await interaction.deferReply({ flags: MessageFlags.Ephemeral });
        const question = interaction.options.getString('prompt', true);
        const reply = newReply(askTarget(interaction));
        const name =
          interaction.member && 'displayName' in interaction.member
            ? String(interaction.member.displayName)
            : interaction.user.displayName;
        // Keyed by the interaction, not the channel: asks run side by side, apart from any thread's turns.
        runs.submit(
          {
            kind: 'ask',
            threadId: `ask:${interaction.id}`,
            threadName: undefined,
            guildId: interaction.guildId ?? undefined,
            userId: interaction.user.id,
            userName: name,
          },
          reply,
          (signal) =>
            converse(reply, signal, {
              kind: 'ask',
              cwd: join(config.claude.workspaceRoot, '_ask', interaction.user.id),
              tmpKey: `ask-${interaction.id}`,
              session: undefined,
              senderId: interaction.user.id,
              claudeToken: token,
              githubToken: undefined,
              prompt: promptText(
                { content: question, senderId: interaction.user.id, senderName: name, mentions: [] },
                botId(),
              ),
              canUseTool: undefined,
            }),
        );
        return;
      }
      default:
        await ephemeral(interaction, `I do not know /${interaction.commandName}.`);
    }
  };

  const onModal = async (interaction: ModalSubmitInteraction): Promise<void> => {
    const [prefix, kind] = interaction.customId.split(':');
    if (prefix !== LINK_MODAL || (kind !== 'claude' && kind !== 'github')) return;
    const value = interaction.fields.getTextInputValue('token').trim();
    if (kind === 'claude' && !looksLikeClaudeToken(value)) {
      await ephemeral(
        interaction,
        'That does not look like the output of `claude setup-token` (it starts with ' +
          '`sk-ant-oat`). Nothing was saved; run `claude setup-token` and paste the token it ' +
          'prints.',
      );
      return;
    }
    if (value === '' || /\s/.test(value)) {
      await ephemeral(interaction, 'A token is one word with no spaces. Nothing was saved.');
      return;
    }
    vault.link(interaction.user.id, kind, value);
    logger.info({ userId: interaction.user.id, kind }, 'token linked');
    await ephemeral(
      interaction,
      kind === 'claude'
        ? 'Linked. Your messages to me now run on your own Claude token. `/unlink` removes it.'
        : 'GitHub token linked: agentic turns you start can use it (as GH_TOKEN). `/unlink` removes it.',
    );
  };

  const onButton = async (interaction: ButtonInteraction): Promise<void> => {
    const handled = await approvals.handleClick({
      customId: interaction.customId,
      user: interaction.user,
      update: async (content) => {
        await interaction.update({ content, components: [] });
      },
      replyPrivately: async (content) => {
        await interaction.reply({ content, flags: MessageFlags.Ephemeral });
      },
    });
    if (!handled) logger.debug({ customId: interaction.customId }, 'a button that is not ours');
  };

  const onInteraction = async (interaction: Interaction): Promise<void> => {
    if (!servesGuild(interaction.guildId)) {
      logger.info(
        { guildId: interaction.guildId, userId: interaction.user.id },
        'an interaction from a guild not in guildIds; ignored',
      );
      return;
    }
    if (stopping) {
      if (interaction.isRepliable())
        await interaction.reply({ content: 'I am restarting; try again in a moment.', flags: MessageFlags.Ephemeral });
      return;
    }
    if (interaction.isChatInputCommand()) await onCommand(interaction);
    else if (interaction.isModalSubmit()) await onModal(interaction);
    else if (interaction.isButton()) await onButton(interaction);
  };

  client.on(Events.MessageCreate, (message) => {
    onMessage(message).catch((error: unknown) =>
      logger.error({ err: error, messageId: message.id }, 'handling a message failed'),
    );
  });
  client.on(Events.InteractionCreate, (interaction) => {
    onInteraction(interaction).catch((error: unknown) =>
      logger.error({ err: error, interactionId: interaction.id }, 'handling an interaction failed'),
    );
  });
  client.on(Events.GuildCreate, (guild) => void leaveIfForeign(guild));
  client.on(Events.ThreadDelete, (thread) => {
    // Nobody can read a deleted thread's reply: stop spending its sender's tokens on it.
    if (runs.abortThread(thread.id, 'Stopped: the thread was deleted.') > 0)
      logger.info({ threadId: thread.id }, 'thread deleted; its runs stopped');
  });
  client.on(Events.Error, (error) => logger.error({ err: error }, 'discord client error'));
  client.on(Events.Warn, (message) => logger.warn(message));

  const ready = new Promise<void>((resolveReady) => client.once(Events.ClientReady, () => resolveReady()));
  try {
    await client.login(config.discord.token.reveal());
    await ready;
  } catch (error) {
    await client.destroy();
    store.close();
    throw new DiscordBotError(
      'discord_login_failed',
      `could not log in to Discord at ${config.discord.apiUrl}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  for (const guild of client.guilds.cache.values()) await leaveIfForeign(guild);
  const commands = commandDefinitions();
  const application = client.application!;
  if (config.discord.guildIds === undefined) await application.commands.set(commands);
  else for (const guildId of config.discord.guildIds) await application.commands.set(commands, guildId);
  logger.info(
    { user: client.user?.tag, guilds: config.discord.guildIds ?? 'global' },
    'logged in to Discord; slash commands registered',
  );

  let dashboard: Dashboard | undefined;
  if (config.dashboard !== undefined) {
    dashboard = await startDashboard({
      host: config.dashboard.host,
      port: config.dashboard.port,
      token: config.dashboard.token.reveal(),
      source: runs,
      logger,
    });
  }

  let stopped: Promise<void> | undefined;
  return {
    client,
    runs,
    dashboardUrl: dashboard?.url,
    stop() {
      stopping = true;
      stopped ??= (async () => {
        await runs.abortAll(
          'The bot is restarting; send your message again in a moment.',
          options.stopTimeoutMs ?? 3000,
        );
        await dashboard?.close();
        await client.destroy();
        store.close();
      })();
      return stopped;
    },
  };
}

/** An `/ask` answer: the deferred (ephemeral) reply, then follow-ups past 2,000 characters. */
function askTarget(interaction: ChatInputCommandInteraction): ReplyTarget {
  let first = true;
  return {
    send: async (content) => {
      if (first) {
        first = false;
        await interaction.editReply({ content });
        return '@original';
      }
      return (await interaction.followUp({ content, flags: MessageFlags.Ephemeral })).id;
    },
    edit: async (id, content) => {
      await interaction.editReply({ message: id, content });
    },
    typing: async () => undefined,
    remove: async (id) => {
      await interaction.deleteReply(id);
    },
    isGone,
  };
}

/**
 * Agentic tools run in Claude Code's sandbox, with the bot's own files out of
 * reach: the state database (sealed tokens), the CLI's home (every thread's
 * transcript), every other workspace, the config's folder, the user's home.
 */
async function planIsolation(options: BotOptions): Promise<ToolIsolation> {
  const { config } = options;
  if (!config.claude.agentic) return { kind: 'off' };
  const probe = await probeSandbox(options.childPath);
  if (!probe.ok) return { kind: 'unavailable', reason: probe.reason };
  const secrets = [
    config.discord.token,
    config.secretsKey,
    ...config.previousSecretsKeys,
    ...(config.dashboard === undefined ? [] : [config.dashboard.token]),
  ]
    .map((secret) => secret.source)
    .filter((source) => source.startsWith('file:'))
    .map((source) => source.slice('file:'.length));
  const store = ['', '-wal', '-shm', '-journal'].map((suffix) => `${config.store.path}${suffix}`);
  return {
    kind: 'sandbox',
    privatePaths: [
      config.claude.workspaceRoot,
      config.claude.configDir,
      tmpRootOf(config),
      ...store,
      ...secrets,
      ...(options.configPath === undefined ? [] : [dirname(options.configPath)]),
      ...(options.home === undefined ? [] : [options.home]),
    ],
    // Commands read only the system folders, the toolchains and the thread's workspace (engine README, "The sandbox").
    readPaths: toolchainReadPaths(options.childPath, process.execPath),
  };
}

/** Each thread's CLI temp folder lives under this, beside the CLI's home. */
function tmpRootOf(config: DiscordBotConfig): string {
  return join(dirname(config.claude.configDir), 'tmp');
}

/** Discord's "Unknown Message" and "Cannot edit a message authored by another user": an edit that will never work. */
function isGone(error: unknown): boolean {
  return error instanceof DiscordAPIError && (error.code === 10008 || error.code === 50005 || error.code === 10003);
}

const TMPFS_MAGIC = 0x01021994;

/** Transcripts and the store must outlive a restart: warn when they sit on a temporary filesystem. */
function warnIfTemporary(config: DiscordBotConfig, logger: Logger): void {
  for (const [what, path] of [
    ["claude.configDir (every thread's transcript)", config.claude.configDir],
    ['store.path (sessions and linked tokens)', config.store.path],
  ] as const) {
    const absolute = resolve(path);
    let temporary =
      isInside(absolute, resolve(tmpdir())) || isInside(absolute, '/tmp') || isInside(absolute, '/dev/shm');
    try {
      temporary ||= statfsSync(existingParent(absolute)).type === TMPFS_MAGIC;
    } catch {
      // Not there yet and no parent to ask: the path check above stands.
    }
    if (temporary)
      logger.warn(
        { path: absolute },
        `${what} is on a temporary filesystem: a reboot or a new container loses it. Keep it on a volume or a backed-up folder.`,
      );
  }
}

function existingParent(path: string): string {
  let current = path;
  for (;;) {
    try {
      statfsSync(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}
