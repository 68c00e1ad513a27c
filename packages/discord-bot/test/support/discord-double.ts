import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from 'pino';

/**
 * A local stand-in for Discord: REST API v10 under /api/v10 and gateway v10 at /gateway, enough for the real
 * discord.js 14 Client to log in and work, with every request and every message recorded for tests.
 */

export interface DoubleUser {
  id: string;
  username: string;
  bot?: boolean;
  globalName?: string /** Guild permissions as a bit-field string; default a plain member's (no Manage Threads). */;
  permissions?: string;
}
export interface DoubleAttachment {
  filename: string;
  contentType: string;
  data: Buffer;
}
export interface DoubleMessage {
  id: string;
  channelId: string;
  guildId: string | undefined;
  author: DoubleUser;
  content: string;
  edits: string[];
  messageReference: { messageId: string } | undefined;
  components: unknown[];
  embeds: unknown[];
  flags: number;
  attachments: Array<{ id: string; filename: string; url: string; contentType: string }>;
  createdAt: number;
  /** Set when the message was deleted; `messages()` leaves deleted messages out, `message()` still finds them. */
  deletedAt: number | undefined;
}
export interface DoubleChannel {
  id: string;
  type: number;
  name: string;
  guildId: string;
  parentId: string | undefined;
  ownerId: string | undefined;
  fromMessageId: string | undefined;
}
export interface RecordedRest {
  method: string;
  path: string;
  query: string;
  body: unknown;
  status: number;
  at: number;
}
export interface InteractionRecord {
  id: string;
  token: string;
  type: number;
  userId: string;
  channelId: string;
  callbacks: Array<{ type: number; data: any; at: number }>;
  original: DoubleMessage | undefined;
  followups: DoubleMessage[];
  acknowledgedAt: number | undefined;
}
export interface DiscordDoubleOptions {
  applicationId: string;
  bot?: DoubleUser;
  guilds?: Array<{ id: string; name: string; channels: Array<{ id: string; name: string }> }>;
  logger?: Logger;
  /** How long after its creation an interaction may still be answered (Discord: 3 s). */
  ackWindowMs?: number;
  /** The heartbeat interval sent in HELLO. */
  heartbeatIntervalMs?: number;
}
export interface DiscordDouble {
  readonly apiUrl: string;
  readonly bot: DoubleUser;
  readonly rest: RecordedRest[];
  readonly identifies: Array<{ token: string; intents: number }>;
  readonly connected: boolean;
  channel(id: string): DoubleChannel | undefined;
  threads(): DoubleChannel[];
  messages(channelId: string): DoubleMessage[];
  message(messageId: string): DoubleMessage | undefined;
  typing(channelId: string): number[];
  reactions(messageId: string): string[];
  /** The guilds the bot is in (a guild it left is gone). */
  guilds(): string[];
  /** The bot is added to a guild: GUILD_CREATE is dispatched. */
  addGuild(guild: { id: string; name: string; channels: Array<{ id: string; name: string }> }): void;
  commands(guildId: string | null): unknown[];
  interaction(id: string): InteractionRecord | undefined;
  waitUntilReady(options?: { timeoutMs?: number }): Promise<void>;
  waitFor<T>(check: () => T | undefined | null | false, options?: { timeoutMs?: number; label?: string }): Promise<T>;
  postMessage(input: {
    channelId: string;
    author: DoubleUser;
    content: string;
    mentions?: DoubleUser[];
    attachments?: DoubleAttachment[];
  }): DoubleMessage;
  /** Deletes a thread as a moderator would: it is gone (10003 from then on) and THREAD_DELETE is dispatched. */
  deleteThread(threadId: string): void;
  /** Dispatches MESSAGE_REACTION_ADD as if `user` reacted with `emoji` (unicode, or name:id) to a message. */
  addUserReaction(input: { messageId: string; user: DoubleUser; emoji: string }): void;
  slashCommand(input: {
    channelId: string;
    user: DoubleUser;
    name: string;
    options?: Record<string, string | number | boolean>;
  }): InteractionRecord;
  submitModal(input: {
    channelId: string;
    user: DoubleUser;
    customId: string;
    fields: Record<string, string>;
  }): InteractionRecord;
  clickButton(input: { channelId: string; user: DoubleUser; messageId: string; customId: string }): InteractionRecord;
  rateLimitNext(match: { method: string; path: RegExp }, options: { retryAfterMs: number; count?: number }): void;
  failNext(
    match: { method: string; path: RegExp },
    options: { status: number; code: number; message: string; count?: number },
  ): void;
  dropGateway(code?: number): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
interface Upload {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}
interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  after?: () => void;
}
interface Ctx {
  params: string[];
  query: URLSearchParams;
  body: Json;
  uploads: Upload[];
}
interface StoredMessage extends DoubleMessage {
  type: number;
  mentions: DoubleUser[];
  botReactions: string[];
  editedAt?: number;
  webhookId?: string;
  interaction?: StoredInteraction;
  threadId?: string;
}
interface StoredChannel extends DoubleChannel {
  archived: boolean;
  locked: boolean;
  autoArchiveDuration: number;
  createdAt: number;
}
interface StoredInteraction {
  record: InteractionRecord;
  user: DoubleUser;
  guildId: string;
  createdAt: number;
  componentMessageId?: string;
  commandName?: string;
  loading?: StoredMessage;
}
interface Session {
  id: string;
  socket: WebSocket | undefined;
  ready: boolean;
  seq: number;
  log: Json[];
  intents: number;
}
interface Rule {
  method: string;
  path: RegExp;
  remaining: number;
  reply: () => Reply;
}

const DISCORD_EPOCH = 1_420_070_400_000n;
let lastStamp = 0n;
let increment = 0n;

/** A unique Discord-style snowflake: milliseconds since 2015 in the top bits, a per-millisecond counter below. */
export function snowflake(now = Date.now()): string {
  let stamp = BigInt(now) - DISCORD_EPOCH;
  if (stamp < lastStamp) stamp = lastStamp;
  increment = stamp === lastStamp ? increment + 1n : 0n;
  if (increment > 4095n) {
    stamp += 1n;
    increment = 0n;
  }
  lastStamp = stamp;
  return ((stamp << 22n) | (1n << 17n) | (1n << 12n) | increment).toString();
}

const timeOf = (id: string): number => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
const iso = (ms: number): string => new Date(ms).toISOString();

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: Json,
  ) {
    super(message);
  }
  reply(): Reply {
    return {
      status: this.status,
      body: { code: this.code, message: this.message, ...(this.errors ? { errors: this.errors } : {}) },
    };
  }
}
const fail = {
  unknownChannel: () => new ApiError(404, 10003, 'Unknown Channel'),
  unknownMessage: () => new ApiError(404, 10008, 'Unknown Message'),
  unknownGuild: () => new ApiError(404, 10004, 'Unknown Guild'),
  unknownMember: () => new ApiError(404, 10007, 'Unknown Member'),
  unknownUser: () => new ApiError(404, 10013, 'Unknown User'),
  unknownEmoji: () => new ApiError(400, 10014, 'Unknown Emoji'),
  unknownWebhook: () => new ApiError(404, 10015, 'Unknown Webhook'),
  unknownCommand: () => new ApiError(404, 10063, 'Unknown application command'),
  unknownInteraction: () => new ApiError(404, 10062, 'Unknown interaction'),
  alreadyAcknowledged: () => new ApiError(400, 40060, 'Interaction has already been acknowledged.'),
  notAuthor: () => new ApiError(403, 50005, 'Cannot edit a message authored by another user'),
  emptyMessage: () => new ApiError(400, 50006, 'Cannot send an empty message'),
  wrongChannelType: () => new ApiError(400, 50024, 'Cannot execute action on this channel type'),
  threadExists: () => new ApiError(400, 160004, 'A thread has already been created for this message'),
  /** Discord's 50035 with its nested `errors`, e.g. field 'data.content'. */
  form(field: string, code: string, message: string): ApiError {
    const errors = field
      .split('.')
      .reduceRight<Json>((inner, key) => ({ [key]: inner }), { _errors: [{ code, message }] });
    return new ApiError(400, 50035, 'Invalid Form Body', errors);
  },
};

const Intents = { Guilds: 1 << 0, GuildMessages: 1 << 9, GuildMessageReactions: 1 << 10, MessageContent: 1 << 15 };
const Flags = { Ephemeral: 64, Loading: 128, HasThread: 32 };
/** Every permission except Administrator, as a bot with a generous role would have. */
const PERMISSIONS = ((1n << 51n) - 1n - 8n).toString();
/** What a plain member may do: see, write (also in threads), react, attach, read history, use commands, start threads. Not Manage Threads. */
const MEMBER_PERMISSIONS = [6n, 10n, 11n, 15n, 16n, 31n, 35n, 38n]
  .reduce((all, bit) => all | (1n << bit), 0n)
  .toString();

export async function startDiscordDouble(options: DiscordDoubleOptions): Promise<DiscordDouble> {
  const double = new Double(options);
  await double.listen();
  return double;
}

class Double implements DiscordDouble {
  readonly bot: DoubleUser;
  readonly rest: RecordedRest[] = [];
  readonly identifies: Array<{ token: string; intents: number }> = [];
  apiUrl = '';
  #origin = '';
  readonly #server: Server;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #guilds: Array<{ id: string; name: string; ownerId: string }> = [];
  readonly #channels = new Map<string, StoredChannel>();
  readonly #store = new Map<string, StoredMessage>();
  readonly #files = new Map<string, DoubleAttachment>();
  readonly #typings = new Map<string, number[]>();
  readonly #commandLists = new Map<string, Json[]>();
  readonly #interactions = new Map<string, StoredInteraction>();
  readonly #users = new Map<string, DoubleUser>();
  readonly #sessions = new Map<string, Session>();
  readonly #rules: Rule[] = [];
  readonly #waiters = new Set<() => void>();
  #closed = false;
  readonly #startedAt = Date.now();
  readonly #routes: Array<{ method: string; pattern: RegExp; auth: boolean; handle: (ctx: Ctx) => Reply }>;

  readonly #options: DiscordDoubleOptions;

  constructor(options: DiscordDoubleOptions) {
    this.#options = options;
    this.bot = options.bot ?? { id: options.applicationId, username: 'Bubble', bot: true };
    this.#users.set(this.bot.id, this.bot);
    for (const guild of options.guilds ?? [
      { id: '456', name: 'Bubble test guild', channels: [{ id: '1000', name: 'general' }] },
    ])
      this.#addGuild(guild);
    this.#routes = this.#buildRoutes();
    this.#server = createServer((req, res) => void this.#onRequest(req, res));
    this.#server.on('upgrade', (req, socket, head) => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/gateway') return void socket.destroy();
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onGateway(ws));
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.#origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    this.apiUrl = `${this.#origin}/api`;
  }

  // ---- queries -------------------------------------------------------------------------------------------------

  get connected(): boolean {
    return [...this.#sessions.values()].some((s) => s.ready && s.socket?.readyState === WebSocket.OPEN);
  }
  channel(id: string): DoubleChannel | undefined {
    return this.#channels.get(id);
  }
  threads(): DoubleChannel[] {
    return [...this.#channels.values()].filter((c) => c.type === 11 || c.type === 12);
  }
  messages(channelId: string): DoubleMessage[] {
    return [...this.#store.values()].filter((m) => m.channelId === channelId && m.deletedAt === undefined);
  }
  message(messageId: string): DoubleMessage | undefined {
    return this.#store.get(messageId);
  }
  typing(channelId: string): number[] {
    return this.#typings.get(channelId) ?? [];
  }
  reactions(messageId: string): string[] {
    return this.#store.get(messageId)?.botReactions ?? [];
  }
  guilds(): string[] {
    return this.#guilds.map((g) => g.id);
  }
  addGuild(guild: { id: string; name: string; channels: Array<{ id: string; name: string }> }): void {
    this.#addGuild(guild);
    this.#dispatch('GUILD_CREATE', this.#guildCreate(guild.id), Intents.Guilds);
    this.#changed();
  }
  commands(guildId: string | null): unknown[] {
    return this.#commandLists.get(guildId ?? '') ?? [];
  }
  interaction(id: string): InteractionRecord | undefined {
    return this.#interactions.get(id)?.record;
  }

  waitUntilReady(options: { timeoutMs?: number } = {}): Promise<void> {
    return this.waitFor(() => this.connected, { ...options, label: 'a gateway client to be ready' }).then(
      () => undefined,
    );
  }

  waitFor<T>(
    check: () => T | undefined | null | false,
    options: { timeoutMs?: number; label?: string } = {},
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? 10_000;
    return new Promise<T>((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.#waiters.delete(evaluate);
      };
      const evaluate = (): void => {
        if (this.#closed) {
          finish();
          reject(new Error(`the double was closed while waiting for ${options.label ?? 'a condition'}`));
          return;
        }
        try {
          const value = check();
          if (value) {
            finish();
            resolve(value);
          }
        } catch (error) {
          finish();
          reject(error);
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${options.label ?? 'a condition'}`));
      }, timeoutMs);
      // State changes trigger evaluation; the poll catches conditions that depend on things outside the double.
      const poll = setInterval(evaluate, 20);
      this.#waiters.add(evaluate);
      evaluate();
    });
  }

  #changed(): void {
    for (const evaluate of [...this.#waiters]) evaluate();
  }

  // ---- test-driven events --------------------------------------------------------------------------------------

  deleteThread(threadId: string): void {
    const thread = this.#requireChannel(threadId);
    if (thread.type !== 11 && thread.type !== 12) throw new Error(`${threadId} is not a thread`);
    this.#channels.delete(threadId);
    this.#dispatch(
      'THREAD_DELETE',
      { id: thread.id, guild_id: thread.guildId, parent_id: thread.parentId, type: thread.type },
      Intents.Guilds,
    );
    this.#changed();
  }

  postMessage(input: {
    channelId: string;
    author: DoubleUser;
    content: string;
    mentions?: DoubleUser[];
    attachments?: DoubleAttachment[];
  }): DoubleMessage {
    const channel = this.#requireChannel(input.channelId);
    this.#users.set(input.author.id, input.author);
    const message = this.#newMessage(channel, input.author, { content: input.content, mentions: input.mentions ?? [] });
    message.attachments = (input.attachments ?? []).map((a) => this.#saveFile(a));
    this.#dispatchMessage('MESSAGE_CREATE', message);
    this.#changed();
    return message;
  }

  addUserReaction(input: { messageId: string; user: DoubleUser; emoji: string }): void {
    const message = this.#store.get(input.messageId);
    if (!message) throw new Error(`no message ${input.messageId}`);
    this.#users.set(input.user.id, input.user);
    this.#dispatch(
      'MESSAGE_REACTION_ADD',
      this.#reactionEvent(message, input.user, input.emoji),
      Intents.GuildMessageReactions,
    );
  }

  slashCommand(input: {
    channelId: string;
    user: DoubleUser;
    name: string;
    options?: Record<string, string | number | boolean>;
  }): InteractionRecord {
    const channel = this.#requireChannel(input.channelId);
    const command = this.#findCommand(channel.guildId, input.name);
    const options = Object.entries(input.options ?? {}).map(([name, value]) => ({
      name,
      value,
      type: optionType(command, name, value),
    }));
    const data = {
      id: command?.id ?? snowflake(),
      name: input.name,
      type: 1,
      options,
      ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
    };
    return this.#createInteraction(channel, input.user, 2, data, { commandName: input.name });
  }

  submitModal(input: {
    channelId: string;
    user: DoubleUser;
    customId: string;
    fields: Record<string, string>;
  }): InteractionRecord {
    const channel = this.#requireChannel(input.channelId);
    const components = Object.entries(input.fields).map(([customId, value]) => ({
      type: 1,
      components: [{ type: 4, custom_id: customId, value }],
    }));
    return this.#createInteraction(channel, input.user, 5, { custom_id: input.customId, components }, {});
  }

  clickButton(input: { channelId: string; user: DoubleUser; messageId: string; customId: string }): InteractionRecord {
    const channel = this.#requireChannel(input.channelId);
    const message = this.#store.get(input.messageId);
    if (!message || message.channelId !== channel.id)
      throw new Error(`no message ${input.messageId} in channel ${channel.id}`);
    return this.#createInteraction(
      channel,
      input.user,
      3,
      { custom_id: input.customId, component_type: 2 },
      { componentMessageId: message.id },
    );
  }

  rateLimitNext(match: { method: string; path: RegExp }, options: { retryAfterMs: number; count?: number }): void {
    const seconds = options.retryAfterMs / 1000;
    this.#rules.push({
      method: match.method.toUpperCase(),
      path: match.path,
      remaining: options.count ?? 1,
      // Discord's bucket headers: Remaining 0 with Reset-After makes @discordjs/rest wait out the bucket, then retry.
      reply: () => ({
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: seconds, global: false },
        headers: {
          'retry-after': String(seconds),
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': ((Date.now() + options.retryAfterMs) / 1000).toFixed(3),
          'x-ratelimit-reset-after': seconds.toFixed(3),
          'x-ratelimit-bucket': randomBytes(16).toString('hex'),
          'x-ratelimit-scope': 'user',
        },
      }),
    });
  }

  failNext(
    match: { method: string; path: RegExp },
    options: { status: number; code: number; message: string; count?: number },
  ): void {
    const reply = (): Reply => ({ status: options.status, body: { code: options.code, message: options.message } });
    this.#rules.push({ method: match.method.toUpperCase(), path: match.path, remaining: options.count ?? 1, reply });
  }

  dropGateway(code = 4000): void {
    for (const session of this.#sessions.values()) {
      const socket = session.socket;
      if (!socket) continue;
      // Detached at once, so events from now on wait in the session's log for the client's RESUME.
      session.socket = undefined;
      session.ready = false;
      // 1006 cannot be sent in a close frame; it is what a client sees when the connection just dies.
      if (code === 1006) socket.terminate();
      else socket.close(code, 'dropped by the test');
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#changed();
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // ---- gateway -------------------------------------------------------------------------------------------------

  #onGateway(socket: WebSocket): void {
    const send = (payload: Json): void => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(payload));
    };
    send({ op: 10, d: { heartbeat_interval: this.#options.heartbeatIntervalMs ?? 41_250 }, s: null, t: null });
    socket.on('message', (raw) => {
      let packet: Json;
      try {
        packet = JSON.parse(String(raw)) as Json;
      } catch {
        return void socket.close(4002, 'Error while decoding payload.');
      }
      this.#options.logger?.debug({ op: packet.op }, 'discord double: gateway in');
      this.#onGatewayPacket(socket, send, packet);
      this.#changed();
    });
    socket.on('close', () => {
      for (const session of this.#sessions.values())
        if (session.socket === socket) {
          session.socket = undefined;
          session.ready = false;
        }
      this.#changed();
    });
  }

  #onGatewayPacket(socket: WebSocket, send: (payload: Json) => void, packet: Json): void {
    const d = (packet.d ?? {}) as Json;
    switch (packet.op) {
      case 1:
        send({ op: 11, d: null, s: null, t: null });
        return;
      case 2:
        this.#identify(socket, d);
        return;
      case 6:
        this.#resume(socket, send, d);
        return;
      case 8:
        this.#requestMembers(socket, d);
        return;
      case 3:
      case 4:
        return;
      default:
        socket.close(4001, 'Unknown opcode.');
    }
  }

  #identify(socket: WebSocket, d: Json): void {
    if (typeof d.token !== 'string' || d.token === '') return void socket.close(4004, 'Authentication failed.');
    const intents = Number(d.intents ?? 0);
    this.identifies.push({ token: d.token, intents });
    // A fresh login supersedes sessions nobody is connected to (a restarted bot never resumes its predecessor's).
    for (const [id, s] of this.#sessions) if (!s.socket) this.#sessions.delete(id);
    const session: Session = { id: randomBytes(16).toString('hex'), socket, ready: false, seq: 0, log: [], intents };
    this.#sessions.set(session.id, session);
    this.#sendTo(session, 'READY', {
      v: 10,
      user: { ...apiUser(this.bot), verified: true, mfa_enabled: false, email: null, flags: 0 },
      guilds: this.#guilds.map((g) => ({ id: g.id, unavailable: true })),
      session_id: session.id,
      session_type: 'normal',
      resume_gateway_url: `${this.#origin.replace('http', 'ws')}/gateway`,
      shard: [0, 1],
      application: { id: this.#options.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      user_settings: {},
      _trace: ['discord-double'],
    });
    for (const guild of this.#guilds) this.#sendTo(session, 'GUILD_CREATE', this.#guildCreate(guild.id));
    session.ready = true;
  }

  #resume(socket: WebSocket, send: (payload: Json) => void, d: Json): void {
    const session = this.#sessions.get(String(d.session_id));
    if (!session || session.socket) {
      send({ op: 9, d: false, s: null, t: null });
      return;
    }
    session.socket = socket;
    for (const packet of session.log) if (Number(packet.s) > Number(d.seq ?? 0)) send(packet);
    session.ready = true;
    this.#sendTo(session, 'RESUMED', {});
  }

  #requestMembers(socket: WebSocket, d: Json): void {
    const session = [...this.#sessions.values()].find((s) => s.socket === socket);
    const ids = Array.isArray(d.user_ids)
      ? d.user_ids.map(String)
      : typeof d.user_ids === 'string'
        ? [d.user_ids]
        : undefined;
    const query = typeof d.query === 'string' ? d.query.toLowerCase() : '';
    const users = [...this.#users.values()].filter((u) =>
      ids ? ids.includes(u.id) : u.username.toLowerCase().startsWith(query),
    );
    const members = users.map((u) => this.#apiMember(u, true));
    if (session)
      this.#sendTo(session, 'GUILD_MEMBERS_CHUNK', {
        guild_id: d.guild_id,
        members,
        chunk_index: 0,
        chunk_count: 1,
        not_found: [],
        nonce: d.nonce,
      });
  }

  #sendTo(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const packet = { op: 0, t, s: session.seq, d };
    // Kept so a resuming client gets what it missed; bounded because nobody resumes after hours.
    session.log.push(packet);
    if (session.log.length > 1000) session.log.shift();
    if (
      session.socket?.readyState === WebSocket.OPEN &&
      (session.ready || t === 'READY' || t === 'GUILD_CREATE' || t === 'RESUMED')
    ) {
      session.socket.send(JSON.stringify(packet));
    }
    this.#options.logger?.debug({ t, s: session.seq }, 'discord double: dispatch');
  }

  /** Sends an event to every session whose intents ask for it (intent 0: always); `shape` cuts an event per session. */
  #dispatch(t: string, d: unknown, intent: number, shape?: (session: Session) => unknown): void {
    for (const session of this.#sessions.values()) {
      if (intent === 0 || (session.intents & intent) !== 0) this.#sendTo(session, t, shape ? shape(session) : d);
    }
  }

  #dispatchMessage(t: 'MESSAGE_CREATE' | 'MESSAGE_UPDATE', message: StoredMessage): void {
    if (message.flags & Flags.Ephemeral) return; // only the clicking user sees an ephemeral message; no event for the bot
    this.#dispatch(t, undefined, Intents.GuildMessages, (session) => {
      const payload = this.#gatewayMessage(message);
      // Without MESSAGE_CONTENT a bot sees content only of its own messages and of those mentioning it (Discord's rule).
      const readable =
        (session.intents & Intents.MessageContent) !== 0 ||
        message.author.id === this.bot.id ||
        message.mentions.some((u) => u.id === this.bot.id);
      return readable ? payload : { ...payload, content: '', embeds: [], attachments: [], components: [] };
    });
  }

  // ---- HTTP ----------------------------------------------------------------------------------------------------

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const url = new URL(req.url ?? '/', this.#origin);
    const method = req.method ?? 'GET';
    if (method === 'GET' && url.pathname.startsWith('/attachments/')) return this.#serveFile(url.pathname, res);
    const path = url.pathname.startsWith('/api/v10/') ? url.pathname.slice('/api/v10'.length) : url.pathname;
    let body: unknown;
    let reply: Reply;
    try {
      const parsed = await parseBody(await readAll(req), req.headers['content-type']);
      body = parsed.body;
      reply = this.#route(method, path, url, req.headers.authorization, {
        params: [],
        query: url.searchParams,
        body: (parsed.body ?? {}) as Json,
        uploads: parsed.uploads,
      });
    } catch (error) {
      reply = error instanceof ApiError ? error.reply() : { status: 500, body: { code: 0, message: String(error) } };
    }
    this.rest.push({ method, path, query: url.search.slice(1), body, status: reply.status, at });
    this.#options.logger?.debug({ method, path, status: reply.status }, 'discord double: rest');
    const payload = reply.body === undefined ? '' : JSON.stringify(reply.body);
    res.writeHead(reply.status, { ...(payload ? { 'content-type': 'application/json' } : {}), ...reply.headers });
    res.end(payload, () => {
      // Gateway events follow the REST answer, as they usually do on Discord.
      reply.after?.();
      this.#changed();
    });
  }

  #route(method: string, path: string, url: URL, authorization: string | undefined, ctx: Ctx): Reply {
    const found = this.#routes
      .map((r) => ({ r, m: method === r.method ? r.pattern.exec(path) : null }))
      .find((x) => x.m);
    const needsAuth = found ? found.r.auth : !/^\/(webhooks|interactions)\//.test(path);
    if (!url.pathname.startsWith('/api/v10/')) return { status: 404, body: { code: 0, message: '404: Not Found' } };
    if (needsAuth && !/^Bot \S+/.test(authorization ?? ''))
      return { status: 401, body: { code: 0, message: '401: Unauthorized' } };
    const rule = this.#rules.find((r) => r.remaining > 0 && r.method === method && r.path.test(path));
    if (rule) {
      rule.remaining -= 1;
      return rule.reply();
    }
    if (!found?.m) return { status: 404, body: { code: 0, message: '404: Not Found' } };
    return found.r.handle({ ...ctx, params: found.m.slice(1).map((p) => decodeURIComponent(p)) });
  }

  #serveFile(pathname: string, res: ServerResponse): void {
    const file = this.#files.get(pathname.split('/')[2] ?? '');
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file.contentType, 'content-length': String(file.data.length) }).end(file.data);
  }

  #buildRoutes(): Array<{ method: string; pattern: RegExp; auth: boolean; handle: (ctx: Ctx) => Reply }> {
    const ok = (body: unknown, after?: () => void): Reply => ({ status: 200, body, ...(after ? { after } : {}) });
    const none = (after?: () => void): Reply => ({ status: 204, ...(after ? { after } : {}) });
    const table: Array<[string, string, (ctx: Ctx) => Reply]> = [
      ['GET', '/gateway', () => ok({ url: this.#gatewayUrl() })],
      [
        'GET',
        '/gateway/bot',
        () =>
          ok({
            url: this.#gatewayUrl(),
            shards: 1,
            session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
          }),
      ],
      ['GET', '/users/@me', () => ok(apiUser(this.bot))],
      ['GET', '/users/:user', ({ params: [id] }) => ok(apiUser(this.#users.get(id!) ?? raise(fail.unknownUser())))],
      ['GET', '/applications/@me', () => ok(this.#apiApplication())],
      ['DELETE', '/users/@me/guilds/:guild', ({ params: [id] }) => none(this.#leaveGuild(id!))],
      ['GET', '/guilds/:guild', ({ params: [id] }) => ok(this.#apiGuild(id!))],
      [
        'GET',
        '/guilds/:guild/channels',
        ({ params: [id] }) => ok(this.#guildChannels(id!).map((c) => this.#apiChannel(c))),
      ],
      [
        'GET',
        '/guilds/:guild/members/:user',
        ({ params: [, id] }) => ok(this.#apiMember(this.#users.get(id!) ?? raise(fail.unknownMember()), true)),
      ],
      ['GET', '/channels/:channel', ({ params: [id] }) => ok(this.#apiChannel(this.#requireChannelApi(id!)))],
      ['PATCH', '/channels/:channel', (ctx) => this.#editChannel(ctx)],
      ['GET', '/channels/:channel/messages', (ctx) => ok(this.#listMessages(ctx))],
      ['POST', '/channels/:channel/messages', (ctx) => this.#createChannelMessage(ctx)],
      [
        'GET',
        '/channels/:channel/messages/:message',
        ({ params: [c, m] }) => ok(this.#apiMessage(this.#requireMessage(c!, m!))),
      ],
      ['PATCH', '/channels/:channel/messages/:message', (ctx) => this.#editChannelMessage(ctx)],
      [
        'DELETE',
        '/channels/:channel/messages/:message',
        ({ params: [c, m] }) => none(this.#deleteMessage(this.#requireMessage(c!, m!))),
      ],
      [
        'POST',
        '/channels/:channel/typing',
        ({ params: [c] }) =>
          none(void this.#typings.set(c!, [...this.typing(this.#requireChannelApi(c!).id), Date.now()])),
      ],
      ['PUT', '/channels/:channel/messages/:message/reactions/:emoji/@me', (ctx) => none(this.#react(ctx, true))],
      ['DELETE', '/channels/:channel/messages/:message/reactions/:emoji/@me', (ctx) => none(this.#react(ctx, false))],
      ['POST', '/channels/:channel/messages/:message/threads', (ctx) => this.#createThread(ctx)],
      ['POST', '/channels/:channel/threads', (ctx) => this.#createThread(ctx)],
      ['PUT', '/channels/:channel/thread-members/@me', ({ params: [c] }) => none(void this.#requireChannelApi(c!))],
      ['DELETE', '/channels/:channel/thread-members/@me', ({ params: [c] }) => none(void this.#requireChannelApi(c!))],
      ['GET', '/applications/:app/commands', ({ params: [a] }) => ok(this.#commandList(a!, ''))],
      ['PUT', '/applications/:app/commands', ({ params: [a], body }) => ok(this.#putCommands(a!, '', body))],
      ['POST', '/applications/:app/commands', ({ params: [a], body }) => ok(this.#postCommand(a!, '', body))],
      [
        'DELETE',
        '/applications/:app/commands/:command',
        ({ params: [a, id] }) => none(this.#deleteCommand(a!, '', id!)),
      ],
      ['GET', '/applications/:app/guilds/:guild/commands', ({ params: [a, g] }) => ok(this.#commandList(a!, g!))],
      [
        'PUT',
        '/applications/:app/guilds/:guild/commands',
        ({ params: [a, g], body }) => ok(this.#putCommands(a!, g!, body)),
      ],
      [
        'POST',
        '/applications/:app/guilds/:guild/commands',
        ({ params: [a, g], body }) => ok(this.#postCommand(a!, g!, body)),
      ],
      [
        'DELETE',
        '/applications/:app/guilds/:guild/commands/:command',
        ({ params: [a, g, id] }) => none(this.#deleteCommand(a!, g!, id!)),
      ],
      ['POST', '/interactions/:interaction/:token/callback', (ctx) => this.#callback(ctx)],
      ['POST', '/webhooks/:app/:token', (ctx) => this.#followup(ctx)],
      ['GET', '/webhooks/:app/:token/messages/:message', (ctx) => ok(this.#apiMessage(this.#webhookMessage(ctx)))],
      ['PATCH', '/webhooks/:app/:token/messages/:message', (ctx) => this.#editWebhookMessage(ctx)],
      [
        'DELETE',
        '/webhooks/:app/:token/messages/:message',
        (ctx) => none(this.#deleteMessage(this.#webhookMessage(ctx))),
      ],
    ];
    return table.map(([method, template, handle]) => ({
      method,
      handle,
      auth: !/^\/(webhooks|interactions)\//.test(template),
      pattern: new RegExp(`^${template.replace(/:\w+/g, '([^/]+)')}$`),
    }));
  }

  // ---- channels and messages -----------------------------------------------------------------------------------

  #gatewayUrl(): string {
    return `${this.#origin.replace('http', 'ws')}/gateway`;
  }

  #addChannel(channel: DoubleChannel, extra: Partial<StoredChannel> = {}): StoredChannel {
    const stored: StoredChannel = {
      ...channel,
      archived: false,
      locked: false,
      autoArchiveDuration: 1440,
      createdAt: Date.now(),
      ...extra,
    };
    this.#channels.set(stored.id, stored);
    return stored;
  }

  #requireChannel(id: string): StoredChannel {
    const channel = this.#channels.get(id);
    if (!channel) throw new Error(`the double has no channel ${id}`);
    return channel;
  }

  #requireChannelApi(id: string): StoredChannel {
    return this.#channels.get(id) ?? raise(fail.unknownChannel());
  }

  #requireMessage(channelId: string, messageId: string): StoredMessage {
    this.#requireChannelApi(channelId);
    const message = this.#store.get(messageId);
    // Ephemeral messages cannot be fetched through the channel, only through the interaction's webhook.
    if (
      !message ||
      message.channelId !== channelId ||
      message.deletedAt !== undefined ||
      message.flags & Flags.Ephemeral
    )
      throw fail.unknownMessage();
    return message;
  }

  #addGuild(guild: { id: string; name: string; channels: Array<{ id: string; name: string }> }): void {
    this.#guilds.push({ id: guild.id, name: guild.name, ownerId: snowflake() });
    for (const c of guild.channels)
      this.#addChannel({
        id: c.id,
        type: 0,
        name: c.name,
        guildId: guild.id,
        parentId: undefined,
        ownerId: undefined,
        fromMessageId: undefined,
      });
  }

  /** The bot leaves a guild (DELETE /users/@me/guilds/:id): it is gone, and GUILD_DELETE follows the answer. */
  #leaveGuild(guildId: string): () => void {
    const index = this.#guilds.findIndex((g) => g.id === guildId);
    if (index < 0) throw fail.unknownGuild();
    this.#guilds.splice(index, 1);
    for (const [id, channel] of this.#channels) if (channel.guildId === guildId) this.#channels.delete(id);
    return () => this.#dispatch('GUILD_DELETE', { id: guildId }, Intents.Guilds);
  }

  #guildChannels(guildId: string): StoredChannel[] {
    if (!this.#guilds.some((g) => g.id === guildId)) throw fail.unknownGuild();
    return [...this.#channels.values()].filter((c) => c.guildId === guildId);
  }

  #newMessage(channel: StoredChannel, author: DoubleUser, init: Partial<StoredMessage>): StoredMessage {
    const id = snowflake();
    const message: StoredMessage = {
      id,
      channelId: channel.id,
      guildId: channel.guildId,
      author,
      content: '',
      edits: [],
      messageReference: undefined,
      components: [],
      embeds: [],
      flags: 0,
      attachments: [],
      createdAt: timeOf(id),
      deletedAt: undefined,
      type: 0,
      mentions: [],
      botReactions: [],
      ...init,
    };
    message.edits = init.edits ?? [message.content];
    this.#store.set(id, message);
    return message;
  }

  /** Checks a message body as Discord does (2,000 characters, not empty) and turns it into message fields. */
  #messageFields(body: Json, uploads: Upload[], prefix = ''): Partial<StoredMessage> {
    const fields: Partial<StoredMessage> = {};
    if ('content' in body) fields.content = body.content == null ? '' : String(body.content);
    if ((fields.content ?? '').length > 2000)
      throw fail.form(`${prefix}content`, 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.');
    if (Array.isArray(body.components)) fields.components = body.components;
    if (Array.isArray(body.embeds)) {
      if (body.embeds.length > 10)
        throw fail.form(`${prefix}embeds`, 'BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.');
      fields.embeds = body.embeds;
    }
    if (typeof body.flags === 'number') fields.flags = body.flags;
    if (uploads.length > 0) fields.attachments = uploads.map((u) => this.#saveFile(u));
    return fields;
  }

  #saveFile(file: DoubleAttachment): DoubleMessage['attachments'][number] {
    const id = snowflake();
    this.#files.set(id, file);
    return {
      id,
      filename: file.filename,
      contentType: file.contentType,
      url: `${this.#origin}/attachments/${id}/${encodeURIComponent(file.filename)}`,
    };
  }

  #createChannelMessage({ params: [channelId], body, uploads }: Ctx): Reply {
    const channel = this.#requireChannelApi(channelId!);
    if (channel.type !== 0 && channel.archived && channel.locked) throw new ApiError(403, 50083, 'Thread is archived');
    const fields = this.#messageFields(body, uploads);
    if (!fields.content && !fields.embeds?.length && !fields.attachments?.length && !fields.components?.length)
      throw fail.emptyMessage();
    fields.flags = (fields.flags ?? 0) & ~(Flags.Ephemeral | Flags.Loading); // only interaction responses can be ephemeral
    const reference = body.message_reference as Json | undefined;
    const referenced = reference?.message_id ? this.#store.get(String(reference.message_id)) : undefined;
    if (reference?.message_id && !referenced && reference.fail_if_not_exists !== false) {
      throw fail.form('message_reference', 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
    }
    const message = this.#newMessage(channel, this.bot, {
      ...fields,
      type: referenced ? 19 : 0,
      messageReference: referenced ? { messageId: referenced.id } : undefined,
    });
    if (channel.archived) channel.archived = false; // posting in an archived (unlocked) thread unarchives it
    return {
      status: 200,
      body: this.#apiMessage(message),
      after: () => this.#dispatchMessage('MESSAGE_CREATE', message),
    };
  }

  #editChannelMessage({ params: [channelId, messageId], body, uploads }: Ctx): Reply {
    const message = this.#requireMessage(channelId!, messageId!);
    if (message.author.id !== this.bot.id) throw fail.notAuthor();
    this.#applyEdit(message, body, uploads);
    return {
      status: 200,
      body: this.#apiMessage(message),
      after: () => this.#dispatchMessage('MESSAGE_UPDATE', message),
    };
  }

  #applyEdit(message: StoredMessage, body: Json, uploads: Upload[], prefix = ''): void {
    const { attachments: added = [], flags, ...fields } = this.#messageFields(body, uploads, prefix);
    if (Array.isArray(body.attachments)) {
      const kept = new Set(body.attachments.map((a) => String((a as Json).id)));
      message.attachments = message.attachments.filter((a) => kept.has(a.id));
    }
    message.attachments = [...message.attachments, ...added];
    // Only SUPPRESS_EMBEDS (4) may change on an edit; the first edit of a deferred reply ends its loading state.
    if (flags !== undefined) message.flags = (message.flags & ~4) | (flags & 4);
    message.flags &= ~Flags.Loading;
    if (fields.content !== undefined && (fields.content !== message.content || message.edits.length === 0))
      message.edits.push(fields.content);
    Object.assign(message, fields);
    message.editedAt = Date.now();
  }

  #deleteMessage(message: StoredMessage): () => void {
    message.deletedAt = Date.now();
    return () =>
      this.#dispatch(
        'MESSAGE_DELETE',
        { id: message.id, channel_id: message.channelId, guild_id: message.guildId },
        Intents.GuildMessages,
      );
  }

  #listMessages({ params: [channelId], query }: Ctx): Json[] {
    this.#requireChannelApi(channelId!);
    const limit = Math.min(100, Number(query.get('limit') ?? 50));
    const [before, after] = [query.get('before'), query.get('after')].map((v) => (v ? BigInt(v) : undefined));
    const all = this.messages(channelId!).filter(
      (m) => !(m.flags & Flags.Ephemeral) && (!before || BigInt(m.id) < before) && (!after || BigInt(m.id) > after),
    );
    const picked = after ? all.slice(0, limit) : all.slice(-limit);
    return picked.reverse().map((m) => this.#apiMessage(m as StoredMessage)); // newest first, as Discord answers
  }

  #react({ params: [channelId, messageId, emoji] }: Ctx, add: boolean): () => void {
    const message = this.#requireMessage(channelId!, messageId!);
    const isCustom = /^[\w~]+:\d+$/.test(emoji!);
    if (!isCustom && !/\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u.test(emoji!))
      throw fail.unknownEmoji();
    const had = message.botReactions.includes(emoji!);
    message.botReactions = add
      ? had
        ? message.botReactions
        : [...message.botReactions, emoji!]
      : message.botReactions.filter((e) => e !== emoji);
    if (had === add) return () => undefined;
    return () =>
      this.#dispatch(
        add ? 'MESSAGE_REACTION_ADD' : 'MESSAGE_REACTION_REMOVE',
        this.#reactionEvent(message, this.bot, emoji!),
        Intents.GuildMessageReactions,
      );
  }

  #createThread({ params: [channelId, messageId], body }: Ctx): Reply {
    const parent = this.#requireChannelApi(channelId!);
    if (parent.type !== 0) throw fail.wrongChannelType();
    const name = typeof body.name === 'string' ? body.name : '';
    if (name.length < 1 || name.length > 100)
      throw fail.form('name', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    let id = snowflake();
    if (messageId) {
      const starter = this.#requireMessage(parent.id, messageId);
      if (starter.threadId) throw fail.threadExists();
      // On Discord a thread started from a message has the message's id.
      id = starter.id;
      starter.threadId = id;
      starter.flags |= Flags.HasThread;
    }
    const type = messageId ? 11 : Number(body.type ?? 12);
    const thread = this.#addChannel(
      { id, type, name, guildId: parent.guildId, parentId: parent.id, ownerId: this.bot.id, fromMessageId: messageId },
      { autoArchiveDuration: Number(body.auto_archive_duration ?? 1440) },
    );
    const data = { ...this.#apiChannel(thread), member: this.#threadMember(thread) };
    return {
      status: 201,
      body: data,
      after: () => this.#dispatch('THREAD_CREATE', { ...data, newly_created: true }, Intents.Guilds),
    };
  }

  #editChannel({ params: [channelId], body }: Ctx): Reply {
    const channel = this.#requireChannelApi(channelId!);
    if (typeof body.name === 'string') {
      if (body.name.length < 1 || body.name.length > 100)
        throw fail.form('name', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
      channel.name = body.name;
    }
    if (typeof body.archived === 'boolean') channel.archived = body.archived;
    if (typeof body.locked === 'boolean') channel.locked = body.locked;
    if (typeof body.auto_archive_duration === 'number') channel.autoArchiveDuration = body.auto_archive_duration;
    const data = this.#apiChannel(channel);
    return {
      status: 200,
      body: data,
      after: () => this.#dispatch(channel.type === 0 ? 'CHANNEL_UPDATE' : 'THREAD_UPDATE', data, Intents.Guilds),
    };
  }

  // ---- application commands ------------------------------------------------------------------------------------

  #checkApplication(appId: string, guildId: string): void {
    if (appId !== this.#options.applicationId) throw new ApiError(403, 50001, 'Missing Access');
    if (guildId && !this.#guilds.some((g) => g.id === guildId)) throw fail.unknownGuild();
  }

  #commandList(appId: string, guildId: string): Json[] {
    this.#checkApplication(appId, guildId);
    return this.#commandLists.get(guildId) ?? [];
  }

  /** Gives a command Discord's fields; a command with the same name and type keeps its id, as on Discord. */
  #toCommand(guildId: string, body: Json, index: number): Json {
    const type = Number(body.type ?? 1);
    const name = String(body.name ?? '');
    if (type === 1 && !/^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u.test(name))
      throw fail.form(`${index}.name`, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
    const description = String(body.description ?? '');
    if (type === 1 && (description.length < 1 || description.length > 100))
      throw fail.form(`${index}.description`, 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
    const previous = (this.#commandLists.get(guildId) ?? []).find((c) => c.name === name && c.type === type);
    return {
      default_member_permissions: null,
      nsfw: false,
      integration_types: [0],
      contexts: null,
      options: [],
      description_localizations: null,
      name_localizations: null,
      ...body,
      type,
      name,
      description,
      id: previous?.id ?? snowflake(),
      application_id: this.#options.applicationId,
      version: snowflake(),
      ...(guildId ? { guild_id: guildId } : {}),
    };
  }

  #putCommands(appId: string, guildId: string, body: unknown): Json[] {
    this.#checkApplication(appId, guildId);
    if (!Array.isArray(body)) throw fail.form('_root', 'ARRAY_TYPE_CONVERT', 'Must be an array.');
    const list = body.map((c, i) => this.#toCommand(guildId, c as Json, i));
    this.#commandLists.set(guildId, list);
    return list;
  }

  #postCommand(appId: string, guildId: string, body: Json): Json {
    this.#checkApplication(appId, guildId);
    const command = this.#toCommand(guildId, body, 0);
    this.#commandLists.set(guildId, [
      ...(this.#commandLists.get(guildId) ?? []).filter((c) => c.id !== command.id),
      command,
    ]);
    return command;
  }

  #deleteCommand(appId: string, guildId: string, id: string): undefined {
    const list = this.#commandList(appId, guildId);
    if (!list.some((c) => c.id === id)) throw fail.unknownCommand();
    this.#commandLists.set(
      guildId,
      list.filter((c) => c.id !== id),
    );
    return undefined;
  }

  #findCommand(guildId: string, name: string): Json | undefined {
    return [...(this.#commandLists.get(guildId) ?? []), ...(this.#commandLists.get('') ?? [])].find(
      (c) => c.name === name && c.type === 1,
    );
  }

  // ---- interactions --------------------------------------------------------------------------------------------

  #createInteraction(
    channel: StoredChannel,
    user: DoubleUser,
    type: number,
    data: Json,
    extra: Partial<StoredInteraction>,
  ): InteractionRecord {
    this.#users.set(user.id, user);
    const id = snowflake();
    const record: InteractionRecord = {
      id,
      token: `aW50ZXJhY3Rpb246${id}:${randomBytes(24).toString('base64url')}`,
      type,
      userId: user.id,
      channelId: channel.id,
      callbacks: [],
      original: undefined,
      followups: [],
      acknowledgedAt: undefined,
    };
    this.#interactions.set(id, { record, user, guildId: channel.guildId, createdAt: Date.now(), ...extra });
    const component = extra.componentMessageId ? this.#store.get(extra.componentMessageId) : undefined;
    this.#dispatch(
      'INTERACTION_CREATE',
      {
        id,
        application_id: this.#options.applicationId,
        type,
        data,
        token: record.token,
        version: 1,
        guild_id: channel.guildId,
        guild: { id: channel.guildId, locale: 'en-US', features: [] },
        channel_id: channel.id,
        channel: { ...this.#apiChannel(channel), permissions: PERMISSIONS },
        member: { ...this.#apiMember(user, true), permissions: user.permissions ?? MEMBER_PERMISSIONS },
        app_permissions: PERMISSIONS,
        locale: 'en-US',
        guild_locale: 'en-US',
        entitlements: [],
        authorizing_integration_owners: { 0: channel.guildId },
        context: 0,
        attachment_size_limit: 10_485_760,
        ...(component ? { message: this.#apiMessage(component) } : {}),
      },
      0,
    );
    this.#changed();
    return record;
  }

  #callback({ params: [id, token], query, body, uploads }: Ctx): Reply {
    const interaction = this.#interactions.get(id!);
    if (!interaction || interaction.record.token !== token) throw fail.unknownInteraction();
    if (interaction.record.acknowledgedAt !== undefined) throw fail.alreadyAcknowledged();
    if (Date.now() - interaction.createdAt > (this.#options.ackWindowMs ?? 3000)) throw fail.unknownInteraction();
    const type = Number(body.type);
    const data = (body.data ?? {}) as Json;
    const { message, after } = this.#respond(interaction, type, data, uploads);
    const at = Date.now();
    interaction.record.callbacks.push({ type, data: body.data, at });
    interaction.record.acknowledgedAt = at;
    if (query.get('with_response') !== 'true') return { status: 204, after };
    return {
      status: 200,
      after,
      body: {
        interaction: {
          id: id!,
          type: interaction.record.type,
          response_message_id: message?.id,
          response_message_loading: type === 5,
          response_message_ephemeral: Boolean((message?.flags ?? 0) & Flags.Ephemeral),
        },
        resource: { type, ...(message && type !== 6 ? { message: this.#apiMessage(message) } : {}) },
      },
    };
  }

  /** Applies one callback type; returns the message it concerns and the events to send after the answer. */
  #respond(
    interaction: StoredInteraction,
    type: number,
    data: Json,
    uploads: Upload[],
  ): { message?: StoredMessage; after?: () => void } {
    const { record } = interaction;
    const component = interaction.componentMessageId ? this.#store.get(interaction.componentMessageId) : undefined;
    const channel = this.#requireChannelApi(record.channelId);
    switch (type) {
      case 4: {
        const fields = this.#messageFields(data, uploads, 'data.');
        if (!fields.content && !fields.embeds?.length && !fields.attachments?.length && !fields.components?.length)
          throw fail.emptyMessage();
        const message = this.#interactionMessage(interaction, channel, fields);
        record.original = message;
        return { message, after: () => this.#dispatchMessage('MESSAGE_CREATE', message) };
      }
      case 5: {
        // Discord shows "thinking…" at once: a loading message, without content until @original is edited.
        const message = this.#interactionMessage(interaction, channel, {
          flags: Flags.Loading | (Number(data.flags ?? 0) & Flags.Ephemeral),
          edits: [],
        });
        interaction.loading = message;
        return { message, after: () => this.#dispatchMessage('MESSAGE_CREATE', message) };
      }
      case 6:
      case 7: {
        if (!component)
          throw fail.form('type', 'INTERACTION_RESPONSE_TYPE_INVALID', 'This interaction has no message to update');
        record.original = component;
        if (type === 6) return { message: component };
        this.#applyEdit(component, data, uploads, 'data.');
        return { message: component, after: () => this.#dispatchMessage('MESSAGE_UPDATE', component) };
      }
      case 9: {
        if (record.type === 5)
          throw fail.form('type', 'INTERACTION_RESPONSE_TYPE_INVALID', 'A modal cannot answer a modal submit');
        if (typeof data.custom_id !== 'string' || typeof data.title !== 'string' || !Array.isArray(data.components))
          throw fail.form('data', 'MODEL_TYPE_CONVERT', 'A modal needs custom_id, title and components');
        return {};
      }
      default:
        throw fail.form('type', 'ENUM_TYPE_COERCE', `Value "${type}" is not a valid enum value.`);
    }
  }

  #interactionMessage(
    interaction: StoredInteraction,
    channel: StoredChannel,
    fields: Partial<StoredMessage>,
  ): StoredMessage {
    return this.#newMessage(channel, this.bot, {
      ...fields,
      type: interaction.commandName ? 20 : 0,
      webhookId: this.#options.applicationId,
      interaction,
    });
  }

  #interactionFor({ params: [appId, token] }: Ctx): StoredInteraction {
    const interaction = [...this.#interactions.values()].find((i) => i.record.token === token);
    if (appId !== this.#options.applicationId || !interaction) throw fail.unknownWebhook();
    return interaction;
  }

  #followup(ctx: Ctx): Reply {
    const interaction = this.#interactionFor(ctx);
    if (interaction.record.acknowledgedAt === undefined) throw fail.unknownWebhook();
    const loading = interaction.loading;
    if (loading && loading.flags & Flags.Loading) {
      // As on Discord, the first follow-up after a deferral fills in the "thinking…" message instead of adding one.
      this.#applyEdit(loading, ctx.body, ctx.uploads);
      interaction.record.original = loading;
      interaction.record.followups.push(loading);
      return {
        status: 200,
        body: this.#apiMessage(loading),
        after: () => this.#dispatchMessage('MESSAGE_UPDATE', loading),
      };
    }
    const fields = this.#messageFields(ctx.body, ctx.uploads);
    if (!fields.content && !fields.embeds?.length && !fields.attachments?.length && !fields.components?.length)
      throw fail.emptyMessage();
    const message = this.#interactionMessage(
      interaction,
      this.#requireChannelApi(interaction.record.channelId),
      fields,
    );
    interaction.record.followups.push(message);
    return {
      status: 200,
      body: this.#apiMessage(message),
      after: () => this.#dispatchMessage('MESSAGE_CREATE', message),
    };
  }

  /** @original is the reply (or the "thinking…" message, or for a component, its message); other ids must be this interaction's. */
  #webhookMessage(ctx: Ctx): StoredMessage {
    const interaction = this.#interactionFor(ctx);
    const { record } = interaction;
    const wanted = ctx.params[2];
    const original = (record.original ?? interaction.loading) as StoredMessage | undefined;
    const message =
      wanted === '@original'
        ? original
        : ([original, ...record.followups].find((m) => m?.id === wanted) as StoredMessage | undefined);
    if (!message || message.deletedAt !== undefined) throw fail.unknownMessage();
    return message;
  }

  #editWebhookMessage(ctx: Ctx): Reply {
    const interaction = this.#interactionFor(ctx);
    const message = this.#webhookMessage(ctx);
    const wasLoading = (message.flags & Flags.Loading) !== 0;
    this.#applyEdit(message, ctx.body, ctx.uploads);
    if (wasLoading) interaction.record.original = message;
    return {
      status: 200,
      body: this.#apiMessage(message),
      after: () => this.#dispatchMessage('MESSAGE_UPDATE', message),
    };
  }

  // ---- payloads ------------------------------------------------------------------------------------------------

  #apiApplication(): Json {
    return {
      id: this.#options.applicationId,
      name: this.bot.username,
      icon: null,
      description: '',
      bot_public: true,
      bot_require_code_grant: false,
      flags: 0,
      bot: apiUser(this.bot),
      owner: apiUser({ id: this.#guilds[0]?.ownerId ?? snowflake(), username: 'owner' }),
      verify_key: '0'.repeat(64),
      team: null,
    };
  }

  #apiMember(user: DoubleUser, withUser: boolean): Json {
    return {
      ...(withUser ? { user: apiUser(user) } : {}),
      nick: null,
      avatar: null,
      banner: null,
      roles: [],
      joined_at: iso(this.#startedAt),
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0,
      pending: false,
      communication_disabled_until: null,
    };
  }

  #apiChannel(c: StoredChannel): Json {
    const base = {
      id: c.id,
      type: c.type,
      guild_id: c.guildId,
      name: c.name,
      flags: 0,
      rate_limit_per_user: 0,
      last_message_id: this.#lastMessageId(c.id),
    };
    if (c.type === 0) {
      return {
        ...base,
        position: 0,
        permission_overwrites: [],
        parent_id: null,
        topic: null,
        nsfw: false,
        default_auto_archive_duration: 1440,
        default_thread_rate_limit_per_user: 0,
      };
    }
    const count = this.messages(c.id).length;
    return {
      ...base,
      parent_id: c.parentId,
      owner_id: c.ownerId,
      message_count: count,
      total_message_sent: count,
      member_count: 1,
      thread_metadata: {
        archived: c.archived,
        locked: c.locked,
        auto_archive_duration: c.autoArchiveDuration,
        archive_timestamp: iso(c.createdAt),
        create_timestamp: iso(c.createdAt),
        ...(c.type === 12 ? { invitable: true } : {}),
      },
    };
  }

  #threadMember(thread: StoredChannel): Json {
    return { id: thread.id, user_id: this.bot.id, join_timestamp: iso(thread.createdAt), flags: 1 };
  }

  #lastMessageId(channelId: string): string | null {
    return this.messages(channelId).at(-1)?.id ?? null;
  }

  #apiMessage(m: StoredMessage, depth = 0): Json {
    const thread = m.threadId ? this.#channels.get(m.threadId) : undefined;
    const referenced = m.messageReference ? this.#store.get(m.messageReference.messageId) : undefined;
    const ix = m.interaction;
    return {
      id: m.id,
      channel_id: m.channelId,
      guild_id: m.guildId,
      author: apiUser(m.author),
      content: m.content,
      timestamp: iso(m.createdAt),
      edited_timestamp: m.editedAt ? iso(m.editedAt) : null,
      tts: false,
      mention_everyone: false,
      mentions: m.mentions.map(apiUser),
      mention_roles: [],
      attachments: m.attachments.map((a) => this.#apiAttachment(a)),
      embeds: m.embeds,
      components: m.components,
      pinned: false,
      type: m.type,
      flags: m.flags,
      ...(m.botReactions.length
        ? {
            reactions: m.botReactions.map((e) => ({
              emoji: emojiPayload(e),
              count: 1,
              count_details: { burst: 0, normal: 1 },
              me: true,
              me_burst: false,
              burst_colors: [],
            })),
          }
        : {}),
      ...(m.messageReference
        ? {
            message_reference: {
              type: 0,
              message_id: m.messageReference.messageId,
              channel_id: m.channelId,
              guild_id: m.guildId,
            },
          }
        : {}),
      ...(m.messageReference && depth === 0
        ? { referenced_message: referenced ? this.#apiMessage(referenced, 1) : null }
        : {}),
      ...(thread ? { thread: this.#apiChannel(thread) } : {}),
      ...(m.webhookId ? { webhook_id: m.webhookId, application_id: this.#options.applicationId } : {}),
      ...(ix
        ? {
            interaction_metadata: {
              id: ix.record.id,
              type: ix.record.type,
              user: apiUser(ix.user),
              authorizing_integration_owners: { 0: ix.guildId },
            },
          }
        : {}),
    };
  }

  #apiAttachment(a: DoubleMessage['attachments'][number]): Json {
    return {
      id: a.id,
      filename: a.filename,
      size: this.#files.get(a.id)?.data.length ?? 0,
      url: a.url,
      proxy_url: a.url,
      content_type: a.contentType,
    };
  }

  /** The gateway form of a message: with the author's member and each mentioned user's member, as Discord sends it. */
  #gatewayMessage(m: StoredMessage): Json {
    const api = this.#apiMessage(m);
    if (!m.guildId) return api;
    return {
      ...api,
      member: this.#apiMember(m.author, false),
      mentions: m.mentions.map((u) => ({ ...apiUser(u), member: this.#apiMember(u, false) })),
    };
  }

  #reactionEvent(m: StoredMessage, user: DoubleUser, emoji: string): Json {
    return {
      user_id: user.id,
      channel_id: m.channelId,
      message_id: m.id,
      guild_id: m.guildId,
      emoji: emojiPayload(emoji),
      burst: false,
      type: 0,
      message_author_id: m.author.id,
      ...(m.guildId ? { member: this.#apiMember(user, true) } : {}),
    };
  }

  #apiGuild(id: string): Json {
    const guild = this.#guilds.find((g) => g.id === id) ?? raise(fail.unknownGuild());
    const everyone = {
      id: guild.id,
      name: '@everyone',
      color: 0,
      colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
      hoist: false,
      icon: null,
      unicode_emoji: null,
      position: 0,
      permissions: PERMISSIONS,
      managed: false,
      mentionable: false,
      flags: 0,
    };
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      banner: null,
      description: null,
      owner_id: guild.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      mfa_level: 0,
      nsfw_level: 0,
      premium_tier: 0,
      premium_subscription_count: 0,
      premium_progress_bar_enabled: false,
      system_channel_id: null,
      system_channel_flags: 0,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      preferred_locale: 'en-US',
      vanity_url_code: null,
      features: [],
      application_id: null,
      max_members: 500_000,
      max_video_channel_users: 25,
      max_stage_video_channel_users: 50,
      widget_enabled: false,
      widget_channel_id: null,
      roles: [everyone],
      emojis: [],
      stickers: [],
      incidents_data: null,
    };
  }

  /** GUILD_CREATE: the guild with its text channels, the threads still open (so a restarted bot knows them), and members. */
  #guildCreate(id: string): Json {
    const channels = this.#guildChannels(id);
    const members = [...this.#users.values()].map((u) => this.#apiMember(u, true));
    return {
      ...this.#apiGuild(id),
      joined_at: iso(this.#startedAt),
      large: false,
      unavailable: false,
      member_count: members.length + 1,
      members,
      channels: channels.filter((c) => c.type === 0).map((c) => this.#apiChannel(c)),
      threads: channels
        .filter((c) => c.type !== 0 && !c.archived)
        .map((c) => ({ ...this.#apiChannel(c), member: this.#threadMember(c) })),
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
      lazy: true,
    };
  }
}

function apiUser(u: DoubleUser): Json {
  return {
    id: u.id,
    username: u.username,
    discriminator: '0',
    global_name: u.globalName ?? null,
    avatar: null,
    bot: u.bot ?? false,
    system: false,
    public_flags: 0,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
  };
}

function emojiPayload(emoji: string): Json {
  const custom = /^([\w~]+):(\d+)$/.exec(emoji);
  return custom ? { id: custom[2], name: custom[1], animated: false } : { id: null, name: emoji };
}

/** The option type a registered command declares (so getInteger works), else one fitting the value. */
function optionType(command: Json | undefined, name: string, value: string | number | boolean): number {
  const declared = (command?.options as Json[] | undefined)?.find((o) => o.name === name)?.type;
  if (typeof declared === 'number') return declared;
  return typeof value === 'string' ? 3 : typeof value === 'boolean' ? 5 : 10;
}

function raise(error: Error): never {
  throw error;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** JSON, or multipart as @discordjs/rest sends files: payload_json plus files[n] parts (parsed by undici's FormData). */
async function parseBody(raw: Buffer, contentType: string | undefined): Promise<{ body: unknown; uploads: Upload[] }> {
  if (raw.length === 0) return { body: undefined, uploads: [] };
  if (contentType?.startsWith('multipart/form-data')) {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const uploads: Upload[] = [];
    let body: unknown;
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') {
        if (field === 'payload_json') body = JSON.parse(value);
        continue;
      }
      const file = value as Blob & { name?: string };
      uploads.push({
        field,
        filename: file.name ?? field,
        contentType: file.type || 'application/octet-stream',
        data: Buffer.from(await file.arrayBuffer()),
      });
    }
    return { body, uploads };
  }
  try {
    return { body: JSON.parse(raw.toString('utf8')), uploads: [] };
  } catch {
    throw fail.form('_root', 'MODEL_TYPE_CONVERT', 'Could not interpret the body as JSON.');
  }
}
