import { parseArgs } from 'node:util';

/** One parsed invocation of the `bubble` terminal client. */
export type CliCommand =
  | { readonly name: 'help' }
  | { readonly name: 'whoami' }
  | { readonly name: 'threads' }
  | { readonly name: 'new'; readonly title: string | undefined; readonly invite: readonly string[] }
  | { readonly name: 'say'; readonly threadId: string; readonly text: string }
  | { readonly name: 'tail'; readonly threadId: string; readonly after: number; readonly once: boolean }
  | { readonly name: 'approve'; readonly threadId: string; readonly toolCallId: string }
  | {
      readonly name: 'deny';
      readonly threadId: string;
      readonly toolCallId: string;
      readonly reason: string | undefined;
    }
  | { readonly name: 'stop'; readonly threadId: string; readonly runId: string; readonly reason: string | undefined }
  | {
      readonly name: 'invite';
      readonly threadId: string;
      readonly principalId: string;
      readonly role: 'member' | 'owner';
    }
  | { readonly name: 'bots-create'; readonly principalId: string; readonly displayName: string | undefined }
  | { readonly name: 'bots-joinable'; readonly principalId: string; readonly joinableBy: 'owners' | 'anyone' }
  | {
      readonly name: 'invite-link';
      readonly threadId: string;
      readonly role: 'member' | 'owner' | undefined;
      readonly expiresInSeconds: number | undefined;
      readonly maxUses: number | undefined;
      readonly webUrl: string | undefined;
    }
  | { readonly name: 'invites-list'; readonly threadId: string }
  | { readonly name: 'invites-revoke'; readonly threadId: string; readonly inviteId: string }
  | { readonly name: 'invitations-list' }
  | { readonly name: 'invitations-accept'; readonly threadId: string }
  | { readonly name: 'invitations-decline'; readonly threadId: string }
  | { readonly name: 'tokens-list' }
  | { readonly name: 'tokens-mint' }
  | { readonly name: 'tokens-revoke'; readonly tokenId: string };

export interface CliInvocation {
  readonly command: CliCommand;
  readonly url: string | undefined;
  readonly token: string | undefined;
  readonly verbose: boolean;
}

/** A command line that cannot be run; the message says why. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `usage: bubble [--url URL] [--token TOKEN] [--verbose] <command> [arguments]

  --url URL       server base URL (or BUBBLE_URL; default http://127.0.0.1:7777)
  --token TOKEN   bearer token (or BUBBLE_TOKEN)

commands:
  whoami                                   show who the token belongs to
  threads                                  list your threads: id, head seq, title
  new [--title T] [--invite ID ...]        create a thread (inviting members); prints its id
  say <threadId> <text>                    post one message (a complete run); prints the run id
  tail <threadId> [--after N] [--once]     print the thread as readable messages and follow it
                                           live (through reconnects) until Ctrl-C; --once stops
                                           at the current head
  approve <threadId> <toolCallId>          allow a tool call that waits for approval (its
                                           toolCallId or approvalId, as tail shows it)
  deny <threadId> <toolCallId> [--reason R]
                                           deny one; both refuse, writing nothing, a call
                                           that is not waiting, or that you may not answer
  stop <threadId> <runId> [--reason R]     ask a run to stop (refused if it has ended)
  invite <threadId> <principalId> [--role member|owner]
                                           add a participant (member by default); someone
                                           you cannot see yet is sent an invitation instead,
                                           which they must accept ("invited (pending)")
  invitations                              your pending invitations: thread, by whom, role,
                                           when, title
  invitations accept <threadId>            join the thread you were invited to
  invitations decline <threadId>           drop the invitation (the inviter is not told)
  bots create <id> [--name NAME]           create a bot you own; prints its token, once
  bots joinable <id> owners|anyone         who may put your bot on a thread: only its owners
                                           (the default), or anyone on the thread; the bot
                                           acts and spends on its owners' behalf
  invite-link <threadId> [--role member|owner] [--expires 7d] [--uses N] [--web-url URL]
                                           create an invite (you own the thread) and print the
                                           web UI link to share; whoever opens it signs in and
                                           joins. Defaults: member, 7 days, 1 use; --expires
                                           takes seconds or 30m, 12h, 7d; --web-url when the UI
                                           is not served by the server itself
  invites list <threadId>                  the thread's invites: id, role, uses/max, expiry
  invites revoke <threadId> <inviteId>     end an invite: its link stops working at once
  tokens list                              your own tokens: id, created, "current" for this one
  tokens mint                              a new token for yourself (humans); printed once
  tokens revoke <tokenId>                  end one of your tokens at once (its sockets close)

exit codes: 0 ok, 1 API error, 2 usage error, 3 auth error (no or rejected token),
            4 server unreachable or timed out, 5 tail ended by the server (access lost)`;

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
  title: { type: 'string' },
  invite: { type: 'string', multiple: true },
  after: { type: 'string' },
  once: { type: 'boolean' },
  reason: { type: 'string' },
  role: { type: 'string' },
  name: { type: 'string' },
  expires: { type: 'string' },
  uses: { type: 'string' },
  'web-url': { type: 'string' },
} as const;

type OptionName = keyof typeof OPTIONS;
const GLOBAL_OPTIONS: readonly OptionName[] = ['url', 'token', 'verbose', 'help'];
const COMMAND_OPTIONS: Record<string, readonly OptionName[]> = {
  whoami: [],
  threads: [],
  new: ['title', 'invite'],
  say: [],
  tail: ['after', 'once'],
  approve: [],
  deny: ['reason'],
  stop: ['reason'],
  invite: ['role'],
  bots: ['name'],
  'invite-link': ['role', 'expires', 'uses', 'web-url'],
  invites: [],
  invitations: [],
  tokens: [],
};

/** Parses the arguments after `bubble` (no env, no I/O). Throws `UsageError`. */
export function parseCliArgs(argv: readonly string[]): CliInvocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const base = { url: values.url, token: values.token, verbose: values.verbose === true };
  const [name, ...rest] = positionals;
  if (values.help === true || name === undefined || name === 'help') return { ...base, command: { name: 'help' } };
  const allowed = COMMAND_OPTIONS[name];
  if (allowed === undefined) throw new UsageError(`unknown command "${name}"`);
  for (const key of Object.keys(values) as OptionName[]) {
    if (!GLOBAL_OPTIONS.includes(key) && !allowed.includes(key))
      throw new UsageError(`option --${key} does not apply to "${name}"`);
  }
  const command = buildCommand(name, rest, values);
  return { ...base, command };
}

function buildCommand(name: string, args: string[], values: Record<string, unknown>): CliCommand {
  const reason = values.reason as string | undefined;
  switch (name) {
    case 'whoami':
    case 'threads':
      expectArgs(name, args, []);
      return { name };
    case 'new':
      expectArgs(name, args, []);
      return {
        name,
        title: values.title as string | undefined,
        invite: (values.invite as string[] | undefined) ?? [],
      };
    case 'say': {
      if (args.length < 2) throw new UsageError('say needs <threadId> <text>');
      const [threadId, ...words] = args as [string, ...string[]];
      const text = words.join(' ');
      if (text.trim() === '') throw new UsageError('say needs some text');
      return { name, threadId, text };
    }
    case 'tail': {
      const [threadId] = expectArgs(name, args, ['threadId']);
      const afterText = values.after as string | undefined;
      const after = afterText === undefined ? 0 : Number(afterText);
      if (!Number.isInteger(after) || after < 0)
        throw new UsageError(`--after must be a whole number >= 0, got "${afterText}"`);
      return { name, threadId, after, once: values.once === true };
    }
    case 'approve': {
      const [threadId, toolCallId] = expectArgs(name, args, ['threadId', 'toolCallId']);
      return { name, threadId, toolCallId };
    }
    case 'deny': {
      const [threadId, toolCallId] = expectArgs(name, args, ['threadId', 'toolCallId']);
      return { name, threadId, toolCallId, reason };
    }
    case 'stop': {
      const [threadId, runId] = expectArgs(name, args, ['threadId', 'runId']);
      return { name, threadId, runId, reason };
    }
    case 'invite': {
      const [threadId, principalId] = expectArgs(name, args, ['threadId', 'principalId']);
      const role = (values.role as string | undefined) ?? 'member';
      if (role !== 'member' && role !== 'owner') throw new UsageError(`--role must be member or owner, got "${role}"`);
      return { name, threadId, principalId, role };
    }
    case 'bots': {
      if (args[0] === 'joinable') {
        const [principalId, joinableBy] = expectArgs('bots joinable', args.slice(1), ['id', 'owners|anyone']);
        if (values.name !== undefined) throw new UsageError('option --name does not apply to "bots joinable"');
        if (joinableBy !== 'owners' && joinableBy !== 'anyone')
          throw new UsageError(`bots joinable takes owners or anyone, got "${joinableBy}"`);
        return { name: 'bots-joinable', principalId, joinableBy };
      }
      const [sub, principalId] = expectArgs(name, args, ['subcommand', 'id']);
      if (sub !== 'create')
        throw new UsageError(
          `unknown subcommand "bots ${sub}" (try "bots create <id>" or "bots joinable <id> owners|anyone")`,
        );
      return { name: 'bots-create', principalId, displayName: values.name as string | undefined };
    }
    case 'invite-link': {
      const [threadId] = expectArgs(name, args, ['threadId']);
      const role = values.role as string | undefined;
      if (role !== undefined && role !== 'member' && role !== 'owner')
        throw new UsageError(`--role must be member or owner, got "${role}"`);
      const expires = values.expires as string | undefined;
      const uses = values.uses as string | undefined;
      const maxUses = uses === undefined ? undefined : Number(uses);
      if (maxUses !== undefined && (!/^\d+$/.test(uses ?? '') || maxUses < 1))
        throw new UsageError(`--uses must be a whole number >= 1, got "${uses}"`);
      const webUrl = values['web-url'] as string | undefined;
      if (webUrl !== undefined && !URL.canParse(webUrl)) throw new UsageError(`--web-url is not a URL: "${webUrl}"`);
      return {
        name,
        threadId,
        role,
        expiresInSeconds: expires === undefined ? undefined : parseDuration(expires),
        maxUses,
        webUrl,
      };
    }
    case 'invites': {
      const [sub, ...more] = args;
      if (sub === 'list') {
        const [threadId] = expectArgs('invites list', more, ['threadId']);
        return { name: 'invites-list', threadId };
      }
      if (sub === 'revoke') {
        const [threadId, inviteId] = expectArgs('invites revoke', more, ['threadId', 'inviteId']);
        return { name: 'invites-revoke', threadId, inviteId };
      }
      throw new UsageError(
        `unknown subcommand "invites${sub === undefined ? '' : ` ${sub}`}" (try "invites list <threadId>" or "invites revoke <threadId> <inviteId>")`,
      );
    }
    case 'invitations': {
      const [sub, ...more] = args;
      if (sub === undefined) return { name: 'invitations-list' };
      if (sub === 'accept' || sub === 'decline') {
        const [threadId] = expectArgs(`invitations ${sub}`, more, ['threadId']);
        return { name: sub === 'accept' ? 'invitations-accept' : 'invitations-decline', threadId };
      }
      throw new UsageError(
        `unknown subcommand "invitations ${sub}" (try "invitations", "invitations accept <threadId>" or "invitations decline <threadId>")`,
      );
    }
    case 'tokens': {
      const [sub, ...more] = args;
      if (sub === 'list' || sub === 'mint') {
        expectArgs(`tokens ${sub}`, more, []);
        return { name: sub === 'list' ? 'tokens-list' : 'tokens-mint' };
      }
      if (sub === 'revoke') {
        const [tokenId] = expectArgs('tokens revoke', more, ['tokenId']);
        return { name: 'tokens-revoke', tokenId };
      }
      throw new UsageError(
        `unknown subcommand "tokens${sub === undefined ? '' : ` ${sub}`}" (try "tokens list", "tokens mint" or "tokens revoke <tokenId>")`,
      );
    }
    default:
      throw new UsageError(`unknown command "${name}"`);
  }
}

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/** `3600`, `90s`, `30m`, `12h`, `7d` to seconds (a whole number above zero). */
export function parseDuration(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * (DURATION_UNITS[match[2] || 's'] ?? 1) : NaN;
  if (!Number.isSafeInteger(seconds) || seconds < 1)
    throw new UsageError(`--expires takes seconds or a number with s, m, h or d (30m, 12h, 7d), got "${text}"`);
  return seconds;
}

/** Checks the argument count; the tuple type covers the longest command (two arguments). */
function expectArgs(command: string, args: string[], names: string[]): [string, string] {
  if (args.length !== names.length) {
    const wanted = names.length === 0 ? 'no arguments' : names.map((n) => `<${n}>`).join(' ');
    throw new UsageError(
      `${command} takes ${wanted}, got ${args.length === 0 ? 'none' : args.map((a) => JSON.stringify(a)).join(' ')}`,
    );
  }
  return args as [string, string];
}
