import { randomUUID } from 'node:crypto';
import { assertNever } from '@bubble/protocol';
import type { NewEvent } from '@bubble/protocol';
import type { Logger } from 'pino';
import { BubbleApiError } from '../client/bubble-api-error.js';
import { BubbleClient } from '../client/bubble-client.js';
import { inviteLink } from '../client/invite-link.js';
import type { LiveState } from '../live/bubble-live.js';
import { parseCliArgs, USAGE, UsageError, type CliCommand } from './cli-args.js';
import { EXIT_CODES, type ExitCode } from './exit-codes.js';
import { checkApprovalAnswer, checkStoppableRun, type Verdict } from './thread-checks.js';
import { ThreadRenderer } from './thread-renderer.js';
import { emptyThreadState, foldThread, type ThreadState, toolCallsOf } from '../fold/index.js';

export const DEFAULT_URL = 'http://127.0.0.1:7777';

export interface CliIo {
  /** Writes one line of output (the command's result). */
  readonly out: (line: string) => void;
  /** Writes one line of diagnostics. */
  readonly err: (line: string) => void;
  /** BUBBLE_URL and BUBBLE_TOKEN, read by the binary. */
  readonly env: { readonly url?: string | undefined; readonly token?: string | undefined };
  /** Aborts on Ctrl-C: `tail` then stops and exits 0. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

/** Runs one `bubble` invocation and answers its exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  let invocation;
  try {
    invocation = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`bubble: ${error.message}`);
    io.err(`run "bubble --help" for usage`);
    return EXIT_CODES.usage;
  }
  const { command } = invocation;
  if (command.name === 'help') {
    io.out(USAGE);
    return EXIT_CODES.ok;
  }
  const url = invocation.url ?? io.env.url ?? DEFAULT_URL;
  const token = invocation.token ?? io.env.token;
  if (token === undefined || token === '') {
    io.err('bubble: no token: pass --token or set BUBBLE_TOKEN');
    return EXIT_CODES.auth;
  }
  try {
    new URL(url);
  } catch {
    io.err(`bubble: --url is not a URL: "${url}"`);
    return EXIT_CODES.usage;
  }
  let lost = false;
  const client = new BubbleClient({
    url,
    token,
    logger: io.logger,
    live: {
      onStateChange: (state: LiveState, detail) => {
        if (state === 'waiting') {
          lost = true;
          io.err(
            `bubble: connection lost${detail.code ? ` (${detail.code})` : ''}; reconnecting in ${((detail.delayMs ?? 0) / 1000).toFixed(1)} s`,
          );
        } else if (state === 'ready' && lost) {
          lost = false;
          io.err('bubble: reconnected');
        }
      },
    },
  });
  try {
    return await execute(client, command, io);
  } catch (error) {
    return reportError(error, url, io);
  } finally {
    client.close();
  }
}

async function execute(
  client: BubbleClient,
  command: Exclude<CliCommand, { name: 'help' }>,
  io: CliIo,
): Promise<ExitCode> {
  switch (command.name) {
    case 'whoami': {
      const principal = await client.whoami();
      io.out(`${principal.principalId}\t${principal.kind}\t${principal.displayName}`);
      return EXIT_CODES.ok;
    }
    case 'threads': {
      for (const thread of await client.listThreads())
        io.out(`${thread.threadId}\t${thread.headSeq}\t${thread.title ?? ''}`);
      return EXIT_CODES.ok;
    }
    case 'new': {
      // A key makes the creation safe to retry after an uncertain failure.
      const { thread } = await client.createThread({
        title: command.title,
        key: `cli_${randomUUID()}`,
      });
      // The id first: if an invitation fails, the thread exists all the same and the caller
      // needs its id.
      io.out(thread.threadId);
      for (const principalId of command.invite) {
        let added: Awaited<ReturnType<typeof client.addParticipant>>;
        try {
          added = await client.addParticipant(thread.threadId, principalId, 'member');
        } catch (error) {
          io.err(`bubble: thread ${thread.threadId} was created, but inviting ${principalId} failed`);
          throw error;
        }
        io.err(
          added.status === 'pending'
            ? `bubble: invited ${principalId} (pending): they must accept`
            : `bubble: added ${principalId}`,
        );
      }
      return EXIT_CODES.ok;
    }
    case 'say': {
      const runId = `run_${randomUUID()}`;
      const textId = 'text-0';
      const events: NewEvent[] = [
        { type: 'run_started', data: { runId } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: textId } } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: textId, delta: command.text } } },
        { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: textId } } },
        { type: 'run_finished', data: { runId, status: 'completed' } },
      ];
      await client.appendEvents(command.threadId, events);
      io.out(runId);
      return EXIT_CODES.ok;
    }
    case 'tail':
      return tail(client, command, io);
    case 'approve':
    case 'deny': {
      const [state, me] = await Promise.all([foldWholeThread(client, command.threadId), client.whoami()]);
      const bots = await botsAmong(client, requestAuthors(state));
      const verdict = checkApprovalAnswer(state, command.threadId, command.toolCallId, me.principalId, (id) =>
        bots.has(id),
      );
      if (!verdict.ok) return refuse(verdict, io);
      await client.appendEvent(command.threadId, {
        type: 'tool_call_approval',
        data:
          command.name === 'approve'
            ? { toolCallId: verdict.value.toolCallId, decision: 'allow' }
            : {
                toolCallId: verdict.value.toolCallId,
                decision: 'deny',
                ...(command.reason !== undefined ? { reason: command.reason } : {}),
              },
      });
      return EXIT_CODES.ok;
    }
    case 'stop': {
      const verdict = checkStoppableRun(
        await foldWholeThread(client, command.threadId),
        command.threadId,
        command.runId,
      );
      if (!verdict.ok) return refuse(verdict, io);
      await client.appendEvent(command.threadId, {
        type: 'run_interrupt_requested',
        data: { runId: command.runId, ...(command.reason !== undefined ? { reason: command.reason } : {}) },
      });
      return EXIT_CODES.ok;
    }
    case 'invite': {
      const added = await client.addParticipant(command.threadId, command.principalId, command.role);
      if (added.status === 'pending') {
        // Consent: the server says the same for an id that does not exist, so neither may we.
        io.out(`${command.principalId}\tinvited (pending)`);
        io.err(`bubble: ${command.principalId} is invited; they are added once they accept`);
        return EXIT_CODES.ok;
      }
      const { grant } = added;
      io.out(`${grant.principalId}\t${grant.role}\t${grant.joinedSeq}`);
      if (!added.created) io.err(`bubble: ${grant.principalId} already was a participant`);
      return EXIT_CODES.ok;
    }
    case 'invitations-list': {
      for (const invitation of await client.listInvitations())
        io.out(
          `${invitation.threadId}\t${invitation.invitedBy}\t${invitation.role}\t${invitation.createdAt}\t${invitation.title ?? ''}`,
        );
      return EXIT_CODES.ok;
    }
    case 'invitations-accept': {
      const grant = await client.acceptInvitation(command.threadId);
      io.out(`${grant.threadId}\t${grant.role}\t${grant.joinedSeq}`);
      io.err(`bubble: joined ${grant.threadId}, invited by ${grant.grantedBy}`);
      return EXIT_CODES.ok;
    }
    case 'invitations-decline': {
      await client.declineInvitation(command.threadId);
      io.err(`bubble: declined the invitation to ${command.threadId}`);
      return EXIT_CODES.ok;
    }
    case 'bots-create': {
      const { principal, token } = await client.createBot({
        principalId: command.principalId,
        displayName: command.displayName,
      });
      io.err(`bubble: created bot ${principal.principalId}; its token follows and is shown only once`);
      io.out(token.token);
      return EXIT_CODES.ok;
    }
    case 'bots-joinable': {
      const principal = await client.updatePrincipal(command.principalId, { joinableBy: command.joinableBy });
      io.out(`${principal.principalId}\t${principal.joinableBy ?? ''}`);
      io.err(
        principal.joinableBy === 'anyone'
          ? `bubble: anyone on a thread may now add ${principal.principalId}; it acts and spends on its owners' behalf there`
          : `bubble: only ${principal.principalId}'s owners may add it to threads now`,
      );
      return EXIT_CODES.ok;
    }
    case 'invite-link': {
      const invite = await client.createInvite(command.threadId, {
        role: command.role,
        expiresInSeconds: command.expiresInSeconds,
        maxUses: command.maxUses,
      });
      // The link alone on stdout, for scripts; what it grants, on stderr.
      io.out(inviteLink(command.webUrl ?? client.url, invite.token));
      io.err(
        `bubble: invite ${invite.inviteId}: joins as ${invite.role}, ${invite.maxUses === 1 ? '1 use' : `${invite.maxUses} uses`}, until ${invite.expiresAt}; ` +
          `anyone with the link may use it (end it with "bubble invites revoke ${invite.threadId} ${invite.inviteId}")`,
      );
      return EXIT_CODES.ok;
    }
    case 'invites-list': {
      for (const invite of await client.listInvites(command.threadId)) {
        io.out(
          `${invite.inviteId}\t${invite.role}\t${invite.uses}/${invite.maxUses}\t${invite.expiresAt}\t${invite.createdBy}`,
        );
      }
      return EXIT_CODES.ok;
    }
    case 'invites-revoke':
      await client.revokeInvite(command.threadId, command.inviteId);
      io.err(`bubble: invite ${command.inviteId} revoked; its link no longer works`);
      return EXIT_CODES.ok;
    case 'tokens-list': {
      for (const token of await client.listMyTokens())
        io.out(`${token.tokenId}\t${token.createdAt}${token.current === true ? '\tcurrent' : ''}`);
      return EXIT_CODES.ok;
    }
    case 'tokens-mint': {
      const token = await client.mintMyToken();
      io.err(`bubble: minted ${token.tokenId}; the token follows and is shown only once`);
      io.out(token.token);
      return EXIT_CODES.ok;
    }
    case 'tokens-revoke': {
      const current = (await client.listMyTokens()).find((t) => t.tokenId === command.tokenId)?.current === true;
      await client.revokeMyToken(command.tokenId);
      io.err(
        `bubble: ${command.tokenId} revoked${current ? '; it was the token this command used, so it no longer works' : ''}`,
      );
      return EXIT_CODES.ok;
    }
    default:
      return assertNever(command, 'command');
  }
}

/** Every event of the thread, oldest first, read page by page. */
/** The thread's fold, read page by page from the start. */
async function foldWholeThread(client: BubbleClient, threadId: string): Promise<ThreadState> {
  let state = emptyThreadState();
  let after = 0;
  for (;;) {
    const page = await client.readEvents(threadId, { after, limit: 1000 });
    for (const event of page.events) state = foldThread(state, event);
    after = page.events.at(-1)?.seq ?? after;
    if (page.events.length === 0 || after >= page.headSeq) return state;
  }
}

/** Who announced approval requests on the thread: only a bot's request counts, so their kinds are looked up. */
function requestAuthors(state: ThreadState): Set<string> {
  return new Set(toolCallsOf(state).flatMap((call) => call.requests.map((request) => request.by)));
}

async function botsAmong(client: BubbleClient, principalIds: Set<string>): Promise<Set<string>> {
  const kinds = await Promise.all(
    [...principalIds].map(async (id) => [id, (await client.getPrincipal(id)).kind] as const),
  );
  return new Set(kinds.filter(([, kind]) => kind === 'bot').map(([id]) => id));
}

/** A command the thread does not allow: said, nothing written. */
function refuse(verdict: Extract<Verdict<unknown>, { ok: false }>, io: CliIo): ExitCode {
  io.err(`bubble: ${verdict.reason}; nothing was written`);
  return EXIT_CODES.apiError;
}

async function tail(
  client: BubbleClient,
  command: Extract<CliCommand, { name: 'tail' }>,
  io: CliIo,
): Promise<ExitCode> {
  // Over HTTP first: a wrong token or thread gets its clear answer before any socket opens.
  const thread = await client.getThread(command.threadId);
  const renderer = new ThreadRenderer();
  const print = (lines: string[]): void => {
    for (const line of lines) io.out(line);
  };
  if (command.once) {
    let after = command.after;
    while (after < thread.headSeq && !io.signal.aborted) {
      const page = await client.readEvents(command.threadId, { after, limit: 1000 });
      if (page.events.length === 0) break;
      for (const event of page.events) {
        if (event.seq > thread.headSeq) break;
        print(renderer.render(event));
        after = event.seq;
      }
    }
    print(renderer.flush());
    return EXIT_CODES.ok;
  }
  const subscription = client.subscribeThread(command.threadId, { afterSeq: command.after, signal: io.signal });
  for await (const event of subscription) print(renderer.render(event));
  print(renderer.flush());
  const reason = subscription.endReason;
  if (reason?.kind === 'server') {
    io.err(`bubble: the server ended the subscription: ${reason.reason}`);
    return EXIT_CODES.subscriptionEnded;
  }
  return EXIT_CODES.ok;
}

function reportError(error: unknown, url: string, io: CliIo): ExitCode {
  if (!(error instanceof BubbleApiError)) {
    io.err(`bubble: unexpected failure: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_CODES.apiError;
  }
  // An answer without Bubble's error body came from something else at that address: a proxy, another site.
  if (error.status > 0 && /^HTTP \d{3}(:| with an empty body)/.test(error.message)) {
    if (error.status === 502 || error.status === 503 || error.status === 504) {
      io.err(
        `bubble: cannot reach the server at ${url}: it answered HTTP ${error.status}, not as Bubble: a proxy in front of the server (nginx?) could not reach it. Is bubble-server running behind it?`,
      );
      return EXIT_CODES.unreachable;
    }
    io.err(
      `bubble: ${url} answered HTTP ${error.status}, not as a Bubble server; is --url (BUBBLE_URL) the server's base address? (${error.message})`,
    );
    return EXIT_CODES.apiError;
  }
  switch (error.code) {
    case 'unauthorized':
      io.err(`bubble: not authorized: ${error.message} (check --token or BUBBLE_TOKEN)`);
      return EXIT_CODES.auth;
    case 'network':
    case 'timeout':
      io.err(`bubble: cannot reach the server at ${url}: ${unreachableAdvice(error)}`);
      return EXIT_CODES.unreachable;
    case 'aborted':
      return EXIT_CODES.ok;
    case 'invalid_request':
    case 'forbidden':
    case 'not_found':
    case 'conflict':
    case 'payload_too_large':
    case 'rate_limited':
    case 'internal':
    case 'invalid_response':
      io.err(`bubble: ${error.code}: ${error.message}`);
      return EXIT_CODES.apiError;
    default:
      // runCli never throws: a code this CLI does not know yet is printed like the other API errors.
      io.err(`bubble: ${String(error.code satisfies never)}: ${error.message}`);
      return EXIT_CODES.apiError;
  }
}

const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Why the server could not be reached, and what to do about it, from the failure's cause. */
function unreachableAdvice(error: BubbleApiError): string {
  if (error.code === 'timeout')
    return `${error.message}; the server may be overloaded, or --url (BUBBLE_URL) may point at something that is not Bubble`;
  const cause = typeof error.details.cause === 'string' ? error.details.cause : undefined;
  if (cause === 'ECONNREFUSED')
    return 'nothing is listening there (connection refused). Is Bubble running? Start it with npm start, or point --url (BUBBLE_URL) at it';
  if (cause === 'ENOTFOUND' || cause === 'EAI_AGAIN')
    return `the host name does not resolve (${cause}); check --url (BUBBLE_URL)`;
  if (cause === 'ECONNRESET' || cause === 'UND_ERR_SOCKET')
    return `the connection was cut (${cause}); if --url is https, check that the server (or its proxy) speaks TLS there`;
  // fetch will not connect to ports such as 9 or 25 at all (the WHATWG "bad ports" list).
  if (cause === undefined && error.message.endsWith(': bad port'))
    return 'fetch refuses to connect to that port (it is on the list of ports browsers and Node block); run the server on another port, such as 7777';
  if (cause !== undefined && TLS_TRUST_CODES.has(cause))
    return `its TLS certificate is not trusted (${cause}); for a certificate of your own, run with NODE_EXTRA_CA_CERTS=/path/to/its.pem`;
  if (cause === 'ERR_SSL_WRONG_VERSION_NUMBER' || cause === 'EPROTO')
    return `TLS failed (${cause}): the server may speak plain http; try --url http://…`;
  return error.message;
}
