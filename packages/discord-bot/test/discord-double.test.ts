import { afterEach, describe, expect, it } from 'vitest';
import {
  ActionRowBuilder,
  AttachmentBuilder,
  ButtonBuilder,
  ButtonStyle,
  ChannelType,
  Client,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  LabelBuilder,
  MessageFlags,
  ModalBuilder,
  SlashCommandBuilder,
  TextInputBuilder,
  TextInputStyle,
  type ClientEvents,
  type TextChannel,
} from 'discord.js';
import {
  snowflake,
  startDiscordDouble,
  type DiscordDouble,
  type DiscordDoubleOptions,
  type DoubleUser,
} from './support/discord-double.js';

const APP_ID = snowflake();
const alice: DoubleUser = { id: snowflake(), username: 'alice', globalName: 'Alice' };
const INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.MessageContent,
  GatewayIntentBits.GuildMessageReactions,
];

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  // Clients first, so none is left reconnecting to a closed double.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startDouble(options: Partial<DiscordDoubleOptions> = {}): Promise<DiscordDouble> {
  const double = await startDiscordDouble({ applicationId: APP_ID, ...options });
  cleanups.push(() => double.close());
  return double;
}

async function login(double: DiscordDouble): Promise<Client<true>> {
  const client = new Client({ intents: INTENTS, rest: { api: double.apiUrl } });
  cleanups.push(() => client.destroy());
  const ready = nextEvent(client, Events.ClientReady);
  await client.login('any-token');
  await ready;
  return client as Client<true>;
}

async function world(
  options: Partial<DiscordDoubleOptions> = {},
): Promise<{ double: DiscordDouble; client: Client<true>; general: TextChannel }> {
  const double = await startDouble(options);
  const client = await login(double);
  const general = client.channels.cache.get('1000') as TextChannel;
  return { double, client, general };
}

function nextEvent<K extends keyof ClientEvents>(
  client: Client,
  event: K,
  filter: (...args: ClientEvents[K]) => boolean = () => true,
): Promise<ClientEvents[K]> {
  return new Promise((resolve) => {
    const listener = (...args: ClientEvents[K]): void => {
      if (!filter(...args)) return;
      client.off(event, listener);
      resolve(args);
    };
    client.on(event, listener);
  });
}

async function catchError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('discord double against the real discord.js client', () => {
  it('logs in: READY and GUILD_CREATE give the client its user, guild and channel', async () => {
    const { double, client, general } = await world();
    expect(client.user.id).toBe(APP_ID);
    expect(client.user.bot).toBe(true);
    expect(client.application.id).toBe(APP_ID);
    expect(general.name).toBe('general');
    expect(general.guild.id).toBe('456');
    expect(general.guild.members.me?.id).toBe(APP_ID);
    expect(double.connected).toBe(true);
    expect(double.identifies).toEqual([{ token: 'any-token', intents: client.options.intents.bitfield }]);
    expect(double.rest.map((r) => `${r.method} ${r.path} ${r.status}`)).toContain('GET /gateway/bot 200');
  });

  it('a user message arrives as messageCreate with content, author, mentions and a downloadable attachment', async () => {
    const { double, client } = await world();
    const seen = nextEvent(client, Events.MessageCreate);
    const posted = double.postMessage({
      channelId: '1000',
      author: alice,
      content: `<@${APP_ID}> look at this`,
      mentions: [double.bot],
      attachments: [{ filename: 'notes.txt', contentType: 'text/plain', data: Buffer.from('hello file') }],
    });
    const [message] = await seen;
    expect(message.id).toBe(posted.id);
    expect(message.content).toBe(`<@${APP_ID}> look at this`);
    expect(message.author.username).toBe('alice');
    expect(message.member?.displayName).toBe('Alice');
    expect(message.mentions.users.has(APP_ID)).toBe(true);
    expect(message.guildId).toBe('456');
    const attachment = message.attachments.first()!;
    expect(attachment.name).toBe('notes.txt');
    const response = await fetch(attachment.url);
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(await response.text()).toBe('hello file');
  });

  it('message.startThread, thread.send and message.edit are recorded; the thread has the message id', async () => {
    const { double, client } = await world();
    const seen = nextEvent(client, Events.MessageCreate);
    double.postMessage({ channelId: '1000', author: alice, content: 'please help' });
    const [message] = await seen;
    const thread = await message.startThread({ name: 'please help' });
    expect(thread.id).toBe(message.id);
    expect(thread.type).toBe(ChannelType.PublicThread);
    expect(double.channel(thread.id)).toMatchObject({
      type: 11,
      parentId: '1000',
      ownerId: APP_ID,
      fromMessageId: message.id,
      guildId: '456',
    });
    const sent = await thread.send('working on it');
    const updated = nextEvent(client, Events.MessageUpdate);
    await sent.edit('done');
    expect((await updated)[1].content).toBe('done');
    expect(double.messages(thread.id).map((m) => m.edits)).toEqual([['working on it', 'done']]);
    expect(double.message(sent.id)).toMatchObject({ channelId: thread.id, content: 'done', author: { id: APP_ID } });
  });

  it('message.reply, typing and reactions (added and removed)', async () => {
    const { double, client, general } = await world();
    const seen = nextEvent(client, Events.MessageCreate);
    double.postMessage({ channelId: '1000', author: alice, content: 'hi' });
    const [message] = await seen;
    await general.sendTyping();
    await message.react('👀');
    await message.react('✅');
    await message.reactions.cache.get('👀')!.users.remove(APP_ID);
    const reply = await message.reply('hello alice');
    expect(double.typing('1000')).toHaveLength(1);
    expect(double.reactions(message.id)).toEqual(['✅']);
    expect(double.message(reply.id)?.messageReference).toEqual({ messageId: message.id });
    expect(reply.reference?.messageId).toBe(message.id);
    expect(await catchError(message.react('not-an-emoji'))).toMatchObject({ code: 10014 });
  });

  it('registers guild and global commands, keeping ids for unchanged names', async () => {
    const { double, client, general } = await world();
    const ask = new SlashCommandBuilder()
      .setName('ask')
      .setDescription('Ask Claude')
      .addStringOption((o) => o.setName('prompt').setDescription('What').setRequired(true));
    const first = await client.application.commands.set([ask], '456');
    const again = await general.guild.commands.set([
      ask,
      new SlashCommandBuilder().setName('stop').setDescription('Stop'),
    ]);
    await client.application.commands.set([new SlashCommandBuilder().setName('help').setDescription('Help')]);
    expect(again.find((c) => c.name === 'ask')?.id).toBe(first.first()?.id);
    expect(double.commands('456').map((c) => (c as { name: string }).name)).toEqual(['ask', 'stop']);
    expect(double.commands(null).map((c) => (c as { name: string }).name)).toEqual(['help']);
    const bad = await catchError(client.application.commands.set([{ name: 'Bad Name', description: 'x' }], '456'));
    expect(bad).toBeInstanceOf(DiscordAPIError);
    expect((bad as DiscordAPIError).code).toBe(50035);
  });

  it('a slash command becomes a ChatInputCommandInteraction that can show a modal', async () => {
    const { double, client } = await world();
    await client.application.commands.set(
      [
        new SlashCommandBuilder()
          .setName('ask')
          .setDescription('Ask')
          .addIntegerOption((o) => o.setName('n').setDescription('n')),
      ],
      '456',
    );
    const seen = nextEvent(client, Events.InteractionCreate);
    const record = double.slashCommand({ channelId: '1000', user: alice, name: 'ask', options: { n: 3 } });
    const [interaction] = await seen;
    if (!interaction.isChatInputCommand()) throw new Error('expected a chat input command');
    expect(interaction.commandName).toBe('ask');
    expect(interaction.options.getInteger('n')).toBe(3);
    expect(interaction.user.id).toBe(alice.id);
    expect(interaction.member?.user.id).toBe(alice.id);
    expect(interaction.channel?.id).toBe('1000');
    expect(interaction.guild?.id).toBe('456');
    const modal = new ModalBuilder()
      .setCustomId('ask-modal')
      .setTitle('Ask Claude')
      .addLabelComponents(
        new LabelBuilder()
          .setLabel('Prompt')
          .setTextInputComponent(new TextInputBuilder().setCustomId('prompt').setStyle(TextInputStyle.Paragraph)),
      );
    await interaction.showModal(modal);
    expect(record.callbacks).toMatchObject([{ type: 9, data: { custom_id: 'ask-modal', title: 'Ask Claude' } }]);
    expect(record.acknowledgedAt).toBeTypeOf('number');
    // A second answer is refused, as on Discord.
    const second = double.rest.length;
    const response = await fetch(`${double.apiUrl}/v10/interactions/${record.id}/${record.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 4, data: { content: 'x' } }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 40060 });
    expect(double.rest[second]?.status).toBe(400);
  });

  it('a modal submit can be answered ephemerally', async () => {
    const { double, client } = await world();
    const seen = nextEvent(client, Events.InteractionCreate);
    const record = double.submitModal({
      channelId: '1000',
      user: alice,
      customId: 'ask-modal',
      fields: { prompt: 'why is the sky blue?' },
    });
    const [interaction] = await seen;
    if (!interaction.isModalSubmit()) throw new Error('expected a modal submit');
    expect(interaction.fields.getTextInputValue('prompt')).toBe('why is the sky blue?');
    expect(interaction.member?.user.id).toBe(alice.id);
    await interaction.reply({ content: 'on it', flags: MessageFlags.Ephemeral });
    expect(record.original).toMatchObject({ content: 'on it', flags: MessageFlags.Ephemeral, edits: ['on it'] });
    // Ephemeral replies are not visible through the channel.
    expect(await catchError(interaction.channel!.messages.fetch(record.original!.id))).toMatchObject({ code: 10008 });
  });

  it('a button click becomes a ButtonInteraction whose update edits the message', async () => {
    const { double, client, general } = await world();
    const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
      new ButtonBuilder().setCustomId('approve').setLabel('Approve').setStyle(ButtonStyle.Success),
    );
    const sent = await general.send({ content: 'Allow?', components: [row] });
    const seen = nextEvent(client, Events.InteractionCreate);
    const record = double.clickButton({ channelId: '1000', user: alice, messageId: sent.id, customId: 'approve' });
    const [interaction] = await seen;
    if (!interaction.isButton()) throw new Error('expected a button');
    expect(interaction.customId).toBe('approve');
    expect(interaction.message.id).toBe(sent.id);
    await interaction.update({ content: 'Approved by alice', components: [] });
    expect(double.message(sent.id)).toMatchObject({
      content: 'Approved by alice',
      edits: ['Allow?', 'Approved by alice'],
      components: [],
    });
    expect(record.callbacks.map((c) => c.type)).toEqual([7]);
  });

  it('deferReply then editReply fills the reply in; followUp adds a message', async () => {
    const { double, client } = await world();
    const seen = nextEvent(client, Events.InteractionCreate);
    const record = double.slashCommand({ channelId: '1000', user: alice, name: 'ask', options: { prompt: 'hi' } });
    const [interaction] = await seen;
    if (!interaction.isChatInputCommand()) throw new Error('expected a chat input command');
    await interaction.deferReply();
    expect(record.original).toBeUndefined();
    await interaction.editReply('first draft');
    await interaction.editReply('final answer');
    const more = await interaction.followUp('one more thing');
    expect(record.callbacks.map((c) => c.type)).toEqual([5]);
    expect(record.original).toMatchObject({
      content: 'final answer',
      edits: ['first draft', 'final answer'],
      flags: 0,
    });
    expect(record.followups.map((m) => m.content)).toEqual(['one more thing']);
    expect(more.id).toBe(record.followups[0]?.id);
    expect((await interaction.fetchReply()).content).toBe('final answer');
  });

  it('a follow-up right after a deferral fills in the "thinking" message; withResponse gets the callback resource', async () => {
    const { double, client } = await world();
    const seen = nextEvent(client, Events.InteractionCreate);
    const record = double.slashCommand({ channelId: '1000', user: alice, name: 'ask' });
    const [interaction] = await seen;
    if (!interaction.isChatInputCommand()) throw new Error('expected a chat input command');
    const response = await interaction.deferReply({ withResponse: true });
    expect(response.interaction.responseMessageLoading).toBe(true);
    const filled = await interaction.followUp('here it is');
    expect(filled.id).toBe(response.resource?.message?.id);
    expect(record.original).toMatchObject({ id: filled.id, content: 'here it is', edits: ['here it is'] });
    expect(double.rest.find((r) => r.path.endsWith('/callback'))?.query).toBe('with_response=true');
  });

  it('files the bot uploads are stored and served; users can react; thread names over 100 characters are refused', async () => {
    const { double, client, general } = await world();
    const sent = await general.send({
      content: 'log attached',
      files: [new AttachmentBuilder(Buffer.from('line 1'), { name: 'run.log' })],
    });
    const [attachment] = double.message(sent.id)!.attachments;
    expect(attachment).toMatchObject({ filename: 'run.log' });
    expect(await (await fetch(attachment!.url)).text()).toBe('line 1');
    expect(double.rest.at(-1)?.body).toMatchObject({ content: 'log attached' });
    const reacted = nextEvent(client, Events.MessageReactionAdd);
    double.addUserReaction({ messageId: sent.id, user: alice, emoji: '🛑' });
    const [reaction, user] = await reacted;
    expect([reaction.emoji.name, user.id]).toEqual(['🛑', alice.id]);
    expect(await catchError(sent.startThread({ name: 'n'.repeat(101) }))).toMatchObject({ code: 50035 });
  });

  it('a 429 on an edit is waited out and retried by @discordjs/rest', async () => {
    const { double, general } = await world();
    const sent = await general.send('v1');
    double.rateLimitNext({ method: 'PATCH', path: /^\/channels\/1000\/messages\/\d+$/ }, { retryAfterMs: 300 });
    await sent.edit('v2');
    const patches = double.rest.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.status)).toEqual([429, 200]);
    expect(patches[1]!.at - patches[0]!.at).toBeGreaterThanOrEqual(300);
    expect(double.message(sent.id)?.edits).toEqual(['v1', 'v2']);
  });

  it('failNext makes the request fail with a DiscordAPIError carrying the code; long content is refused', async () => {
    const { double, general } = await world();
    const sent = await general.send('v1');
    double.failNext(
      { method: 'PATCH', path: /^\/channels\/1000\/messages\// },
      { status: 403, code: 50013, message: 'Missing Permissions' },
    );
    const error = await catchError(sent.edit('v2'));
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ code: 50013, status: 403 });
    expect(await catchError(general.send('x'.repeat(2001)))).toMatchObject({ code: 50035, status: 400 });
    expect(double.message(sent.id)?.edits).toEqual(['v1']);
  });

  it('a restarted client logs in again and finds the thread in its cache', async () => {
    const double = await startDouble();
    const first = await login(double);
    const seen = nextEvent(first, Events.MessageCreate);
    double.postMessage({ channelId: '1000', author: alice, content: 'start' });
    const [message] = await seen;
    const thread = await message.startThread({ name: 'start' });
    await thread.send('in the thread');
    await first.destroy();
    await double.waitFor(() => !double.connected, { label: 'the first client to leave' });
    const second = await login(double);
    const cached = second.channels.cache.get(thread.id);
    expect(cached?.isThread()).toBe(true);
    expect(double.identifies).toHaveLength(2);
    const later = nextEvent(second, Events.MessageCreate);
    double.postMessage({ channelId: thread.id, author: alice, content: 'still there?' });
    expect((await later)[0].channel.id).toBe(thread.id);
  });

  it('a dropped gateway is resumed, and events sent meanwhile are replayed', async () => {
    const { double, client } = await world();
    double.dropGateway();
    expect(double.connected).toBe(false);
    const seen = nextEvent(client, Events.MessageCreate);
    double.postMessage({ channelId: '1000', author: alice, content: 'while you were away' });
    await double.waitUntilReady({ timeoutMs: 5000 });
    expect((await seen)[0].content).toBe('while you were away');
    expect(double.identifies).toHaveLength(1);
  });

  it('a callback later than ackWindowMs gets 10062 Unknown interaction', async () => {
    const { double, client } = await world({ ackWindowMs: 100 });
    const seen = nextEvent(client, Events.InteractionCreate);
    const record = double.slashCommand({ channelId: '1000', user: alice, name: 'ask' });
    const [interaction] = await seen;
    if (!interaction.isChatInputCommand()) throw new Error('expected a chat input command');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await catchError(interaction.reply('too late'))).toMatchObject({ code: 10062, status: 404 });
    expect(record.acknowledgedAt).toBeUndefined();
  });

  it('REST without a bot token is 401, unknown routes are 404 and recorded', async () => {
    const double = await startDouble();
    expect((await fetch(`${double.apiUrl}/v10/channels/1000`)).status).toBe(401);
    const unknown = await fetch(`${double.apiUrl}/v10/no/such/route`, { headers: { authorization: 'Bot x' } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 0, message: '404: Not Found' });
    const missing = await fetch(`${double.apiUrl}/v10/channels/999/messages/1`, {
      headers: { authorization: 'Bot x' },
    });
    expect(await missing.json()).toMatchObject({ code: 10003 });
    expect(double.rest.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /channels/1000 401',
      'GET /no/such/route 404',
      'GET /channels/999/messages/1 404',
    ]);
  });
});
