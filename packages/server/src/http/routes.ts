import {
  AcceptInviteRequestSchema,
  AddParticipantRequestSchema,
  CreateInviteRequestSchema,
  appendRequestEvents,
  AppendRequestSchema,
  ARTIFACT_NAME_PATTERN,
  ArtifactQuerySchema,
  CreatePrincipalRequestSchema,
  CreateThreadRequestSchema,
  MintTokenRequestSchema,
  PrincipalSearchQuerySchema,
  PROTOCOL_VERSION,
  ARTIFACTS_EXTENSION,
  PutArtifactRequestSchema,
  PutCursorRequestSchema,
  ReadEventsQuerySchema,
  UpdatePrincipalRequestSchema,
  type OidcInfo,
} from '@bubble/protocol';
import { fastSingleEvent } from '../domain/append-fast-path.js';
import { invalidRequest } from '../errors/bubble-error.js';
import type { ArtifactService } from '../services/artifact-service.js';
import type { EventService } from '../services/event-service.js';
import type { InviteService } from '../services/invite-service.js';
import type { PrincipalService } from '../services/principal-service.js';
import type { ThreadService } from '../services/thread-service.js';
import type { BubbleStore } from '../store/store.js';
import { parseInput, queryObject } from './parse-input.js';
import type { Handler, RequestContext } from './request-context.js';
import { Router } from './router.js';

export interface RouteDeps {
  store: BubbleStore;
  principals: PrincipalService;
  threads: ThreadService;
  events: EventService;
  artifacts: ArtifactService;
  invites: InviteService;
  version: string;
  /** What `/v1/info` tells browsers about the identity provider; absent without one. */
  oidc?: OidcInfo | undefined;
}

const ok = (body: unknown) => ({ status: 200, body });
const created = (body: unknown) => ({ status: 201, body });
const noContent = { status: 204 } as const;

/** The thread id of the path, recorded for the request's log line. */
const threadParam = (ctx: RequestContext): string => {
  const id = ctx.params.id!;
  ctx.fields.threadId = id;
  return id;
};

const artifactName = (ctx: RequestContext): string => {
  const name = ctx.params.name!;
  if (!ARTIFACT_NAME_PATTERN.test(name))
    throw invalidRequest(`artifact name must match ${ARTIFACT_NAME_PATTERN.source}`);
  return name;
};

/** Every route of the protocol, bound to the services. */
export function createRoutes(deps: RouteDeps): Router<Handler> {
  const { principals, threads, events, artifacts, invites } = deps;
  const info = Object.freeze({
    name: 'bubble',
    version: deps.version,
    protocol: PROTOCOL_VERSION,
    ...(deps.oidc === undefined
      ? {}
      : { auth: { oidc: { issuer: deps.oidc.issuer, clientId: deps.oidc.clientId, audience: deps.oidc.audience } } }),
    extensions: { artifacts: { ...ARTIFACTS_EXTENSION } },
  });
  const r = new Router<Handler>();

  r.add('GET', '/healthz', async () => {
    await deps.store.ping();
    return ok({ ok: true });
  });
  r.add('GET', '/v1/info', async () => ok(info));

  // The WebSocket endpoint answers upgrades only (attach-websocket.ts); a plain GET is told so.
  r.add('GET', '/v1/ws', async () => {
    throw invalidRequest('GET /v1/ws is the WebSocket endpoint: open it with an Upgrade: websocket request');
  });

  // principals and tokens
  r.add('GET', '/v1/auth/whoami', async (ctx) => ok({ principal: await ctx.caller() }));
  // one's own tokens
  r.add('GET', '/v1/auth/tokens', async (ctx) =>
    ok({ tokens: await principals.listOwnTokens(await ctx.authenticated()) }),
  );
  r.add('POST', '/v1/auth/tokens', async (ctx) => {
    const caller = await ctx.caller();
    parseInput(MintTokenRequestSchema, await ctx.json(), 'token request');
    return created({ token: await principals.mintOwnToken(caller) });
  });
  r.add('DELETE', '/v1/auth/tokens/:tokenId', async (ctx) => {
    await principals.revokeOwnToken(await ctx.caller(), ctx.params.tokenId!);
    return noContent;
  });
  r.add('POST', '/v1/principals', async (ctx) => {
    const caller = await ctx.caller();
    const input = parseInput(CreatePrincipalRequestSchema, await ctx.json(), 'principal');
    return created(await principals.createBot(caller, input));
  });
  r.add('GET', '/v1/principals', async (ctx) => {
    const caller = await ctx.caller();
    const q = parseInput(PrincipalSearchQuerySchema, queryObject(ctx.query), 'query');
    return ok({ principals: await principals.search(caller, q.query, q.limit) });
  });
  r.add('GET', '/v1/principals/:id', async (ctx) =>
    ok({ principal: await principals.get(await ctx.caller(), ctx.params.id!) }),
  );
  r.add('PATCH', '/v1/principals/:id', async (ctx) => {
    const caller = await ctx.caller();
    const patch = parseInput(UpdatePrincipalRequestSchema, await ctx.json(), 'principal update');
    return ok({ principal: await principals.update(caller, ctx.params.id!, patch) });
  });
  r.add('POST', '/v1/principals/:id/tokens', async (ctx) => {
    const caller = await ctx.caller();
    parseInput(MintTokenRequestSchema, await ctx.json(), 'token request');
    return created({ token: await principals.mintToken(caller, ctx.params.id!) });
  });
  r.add('GET', '/v1/principals/:id/tokens', async (ctx) =>
    ok({ tokens: await principals.listTokens(await ctx.caller(), ctx.params.id!) }),
  );
  r.add('DELETE', '/v1/principals/:id/tokens/:tokenId', async (ctx) => {
    await principals.revokeToken(await ctx.caller(), ctx.params.id!, ctx.params.tokenId!);
    return noContent;
  });
  r.add('DELETE', '/v1/principals/:id/tokens', async (ctx) => {
    await principals.revokeAllTokens(await ctx.caller(), ctx.params.id!);
    return noContent;
  });

  // threads and grants
  r.add('POST', '/v1/threads', async (ctx) => {
    const caller = await ctx.caller();
    // Every field is optional, so an absent body means `{}`.
    const input = parseInput(CreateThreadRequestSchema, (await ctx.json()) ?? {}, 'thread');
    const result = await threads.create(caller, input);
    ctx.fields.threadId = result.thread.threadId;
    return { status: result.created ? 201 : 200, body: { thread: result.thread } };
  });
  r.add('GET', '/v1/threads', async (ctx) => ok({ threads: await threads.list(await ctx.caller()) }));
  r.add('GET', '/v1/threads/:id', async (ctx) => {
    const caller = await ctx.caller();
    return ok({ thread: await threads.get(caller, threadParam(ctx)) });
  });
  r.add('GET', '/v1/threads/:id/participants', async (ctx) => {
    const caller = await ctx.caller();
    return ok({ grants: await threads.participants(caller, threadParam(ctx)) });
  });
  r.add('POST', '/v1/threads/:id/participants', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const input = parseInput(AddParticipantRequestSchema, await ctx.json(), 'participant');
    const result = await threads.addParticipant(caller, threadId, input);
    if (result.kind === 'pending') {
      // Exactly these fields in this order, whether or not the id exists (protocol.md, Consent).
      return {
        status: 202,
        body: { invitation: { threadId: result.threadId, principalId: result.principalId, status: 'pending' } },
      };
    }
    return { status: result.change === 'created' ? 201 : 200, body: { grant: result.grant } };
  });
  r.add('DELETE', '/v1/threads/:id/participants/:principalId', async (ctx) => {
    const caller = await ctx.caller();
    await threads.removeParticipant(caller, threadParam(ctx), ctx.params.principalId!);
    return noContent;
  });
  r.add('GET', '/v1/invitations', async (ctx) => ok({ invitations: await threads.invitations(await ctx.caller()) }));
  r.add('POST', '/v1/invitations/:id/accept', async (ctx) => {
    const caller = await ctx.caller();
    return ok({ grant: await threads.acceptInvitation(caller, threadParam(ctx)) });
  });
  r.add('POST', '/v1/invitations/:id/decline', async (ctx) => {
    const caller = await ctx.caller();
    await threads.declineInvitation(caller, threadParam(ctx));
    return noContent;
  });
  r.add('GET', '/v1/grants', async (ctx) => ok({ grants: await threads.grants(await ctx.caller()) }));

  // invites
  r.add('POST', '/v1/threads/:id/invites', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const input = parseInput(CreateInviteRequestSchema, (await ctx.json()) ?? {}, 'invite');
    return created({ invite: await invites.create(caller, threadId, input) });
  });
  r.add('GET', '/v1/threads/:id/invites', async (ctx) => {
    const caller = await ctx.caller();
    return ok({ invites: await invites.list(caller, threadParam(ctx)) });
  });
  r.add('DELETE', '/v1/threads/:id/invites/:inviteId', async (ctx) => {
    const caller = await ctx.caller();
    await invites.revoke(caller, threadParam(ctx), ctx.params.inviteId!);
    return noContent;
  });
  r.add('POST', '/v1/invites/accept', async (ctx) => {
    const caller = await ctx.caller();
    const { token } = parseInput(AcceptInviteRequestSchema, await ctx.json(), 'invite acceptance');
    const grant = await invites.accept(caller, token);
    ctx.fields.threadId = grant.threadId;
    return ok({ grant });
  });

  // events and cursors
  r.add('POST', '/v1/threads/:id/events', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const body = await ctx.json();
    const single = fastSingleEvent(body);
    const list =
      single !== null ? [single] : appendRequestEvents(parseInput(AppendRequestSchema, body, 'append request'));
    const result = await events.append(caller, threadId, list);
    const first = result.events[0]?.seq ?? 0;
    const last = result.events[result.events.length - 1]?.seq ?? 0;
    ctx.fields.seq = first === last ? first : [first, last];
    return { status: result.replay ? 200 : 201, body: { events: result.events } };
  });
  r.add('GET', '/v1/threads/:id/events', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const query = parseInput(ReadEventsQuerySchema, queryObject(ctx.query), 'query');
    return ok(await events.read(caller, threadId, query));
  });
  r.add('PUT', '/v1/threads/:id/cursor', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const { seq } = parseInput(PutCursorRequestSchema, await ctx.json(), 'cursor');
    ctx.fields.seq = seq;
    return ok({ seq: await events.putCursor(caller, threadId, seq) });
  });
  r.add('GET', '/v1/threads/:id/cursor', async (ctx) => {
    const caller = await ctx.caller();
    return ok({ seq: await events.getCursor(caller, threadParam(ctx)) });
  });

  // the artifacts extension
  r.add('GET', '/v1/threads/:id/artifacts', async (ctx) => {
    const caller = await ctx.caller();
    return ok({ artifacts: await artifacts.list(caller, threadParam(ctx)) });
  });
  r.add('GET', '/v1/threads/:id/artifacts/:name', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const name = artifactName(ctx);
    const { version } = parseInput(ArtifactQuerySchema, queryObject(ctx.query), 'query');
    return ok({ artifact: await artifacts.get(caller, threadId, name, version) });
  });
  r.add('PUT', '/v1/threads/:id/artifacts/:name', async (ctx) => {
    const caller = await ctx.caller();
    const threadId = threadParam(ctx);
    const name = artifactName(ctx);
    const input = parseInput(PutArtifactRequestSchema, await ctx.json(), 'artifact');
    return created({ artifact: await artifacts.put(caller, threadId, name, input) });
  });

  return r;
}
