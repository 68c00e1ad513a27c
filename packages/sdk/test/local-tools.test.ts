import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubbleClient } from '../src/client/bubble-client.js';
import { runTool, type ToolClient, type ToolContext, type ToolOutcome } from '../src/tools/local-tool.js';
import { buildToolCatalog, type ToolCatalog } from '../src/tools/tool-catalog.js';
import { FAST_RETRY, sayRun, startRuntimeWorld, type RuntimeWorld } from './support/runtime-world.js';

let world: RuntimeWorld;
let bot: BubbleClient;
let catalog: ToolCatalog;
/** A thread of alice's with the bot as member. */
let shared: string;
/** A thread of alice's without the bot. */
let privateThread: string;
/** bob's own client: he accepts the invitations a stranger's add makes (Consent). */
let bobClient: BubbleClient;
/** Another thread of alice's with the bot as member, where dave is too (and nowhere else the bot reads). */
let other: string;

beforeAll(async () => {
  world = await startRuntimeWorld('bot-tools');
  bot = world.botClient();
  catalog = await buildToolCatalog(bot);
  shared = (await world.alice.createThread({ title: 'shared' })).thread.threadId;
  await world.alice.addParticipant(shared, world.botId, 'member');
  privateThread = (await world.alice.createThread({ title: 'private' })).thread.threadId;
  bobClient = new BubbleClient({
    url: world.server.url,
    token: (await world.server.createHuman('bob', 'Bob Builder')).token.token,
  });
  await world.server.createHuman('carol', 'Carol');
  const daveClient = new BubbleClient({
    url: world.server.url,
    token: (await world.server.createHuman('dave', 'Dave Other')).token.token,
  });
  other = (await world.alice.createThread({ title: 'other' })).thread.threadId;
  await world.alice.addParticipant(other, world.botId, 'member');
  // dave is a stranger to alice: he is on `other` once he accepts her invitation (Consent).
  expect((await world.alice.addParticipant(other, 'dave', 'member')).status).toBe('pending');
  await daveClient.acceptInvitation(other);
  // bob is a stranger to alice and the bot: he joins `shared` by accepting alice's invitation; the bot sees him once he is in.
});
afterAll(async () => {
  await world.close();
});

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    client: bot,
    runThreadId: shared,
    threadId: shared,
    runId: 'run-1',
    toolCallId: 'toolu_1',
    principalId: world.botId,
    ...overrides,
  };
}

async function call(name: string, input: unknown, overrides: Partial<ToolContext> = {}): Promise<ToolOutcome> {
  const tool = catalog.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return runTool(tool, input, context(overrides));
}

function result<T>(outcome: ToolOutcome): T {
  if (!outcome.ok) throw new Error(`tool failed: ${JSON.stringify(outcome.error)}`);
  return outcome.result as T;
}

/**
 * A run on a thread the bot cannot read (as if it had been told it was there): past the tools' own
 * scope check, so that Bubble's refusal is what these tests see.
 */
const inPrivateRun = (): Partial<ToolContext> => ({ runThreadId: privateThread, threadId: privateThread });

function expectRefused(outcome: ToolOutcome): void {
  expect(outcome.ok).toBe(false);
  if (outcome.ok) return;
  // Bubble decides between 403 and 404 (a thread the caller may not know exists); either way the tool reports it.
  expect(['forbidden', 'not_found']).toContain(outcome.error.code);
  expect(outcome.error.status).toBe(outcome.error.code === 'forbidden' ? 403 : 404);
}

describe('the local tool catalog against the real server', () => {
  it('has the core tools and, since /v1/info advertises artifacts v1, the artifacts tools', async () => {
    const info = await bot.info();
    expect(info.extensions.artifacts).toEqual({ version: 1 });
    expect(catalog.extensions.artifacts).toBe(true);
    expect(catalog.tools.map((tool) => tool.name).sort()).toEqual([
      'browse_thread',
      'invite_to_thread',
      'list_artifacts',
      'open_subthread',
      'read_artifact',
      'search_principals',
      'write_artifact',
    ]);
  });

  it('leaves the artifacts tools out when the server advertises another manifest', async () => {
    const server: Server = createServer((request, response) => {
      if (request.url === '/v1/info') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ name: 'bubble', version: '9.0.0', protocol: 1, extensions: { artifacts: { version: 2 } } }),
        );
      } else {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'not_found', message: 'no', details: {} } }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const other = new BubbleClient({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        retry: FAST_RETRY,
      });
      const otherCatalog = await buildToolCatalog(other);
      expect(otherCatalog.extensions.artifacts).toBe(false);
      expect(otherCatalog.tools.map((tool) => tool.name).sort()).toEqual([
        'browse_thread',
        'invite_to_thread',
        'open_subthread',
        'search_principals',
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  describe('browse_thread', () => {
    it('renders the newest events compactly and pages back', async () => {
      await sayRun(world.alice, shared, 'hello-run', 'Hello from Alice');
      const page = result<{
        transcript: string[];
        fromSeq: number;
        toSeq: number;
        headSeq: number;
        olderAvailable: boolean;
      }>(await call('browse_thread', { limit: 3 }));
      expect(page.toSeq).toBe(page.headSeq);
      expect(page.transcript.at(-1)).toMatch(/^#\d+ alice: Hello from Alice$/);
      expect(page.olderAvailable).toBe(true);
      const older = result<{ transcript: string[]; toSeq: number }>(
        await call('browse_thread', { before: page.fromSeq, limit: 10 }),
      );
      expect(older.toSeq).toBe(page.fromSeq - 1);
      expect(older.transcript.join('\n')).toContain(`${world.botId} joined as member (by alice)`);
    });

    it('is refused on a thread the bot cannot read', async () => {
      expectRefused(await call('browse_thread', { threadId: privateThread }, inPrivateRun()));
    });

    it('rejects bad input with a clear error', async () => {
      const outcome = await call('browse_thread', { limit: 5000 });
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.error.code).toBe('invalid_input');
    });
  });

  describe('open_subthread', () => {
    it('returns the same child for the same call, a new one for another call; the child starts with only the bot', async () => {
      const first = result<{ threadId: string; parentThreadId: string; created: boolean }>(
        await call('open_subthread', { title: 'side task' }, { toolCallId: 'toolu_sub' }),
      );
      const retry = result<{ threadId: string; created: boolean }>(
        await call('open_subthread', { title: 'side task' }, { toolCallId: 'toolu_sub' }),
      );
      expect(first.parentThreadId).toBe(shared);
      expect(first.created).toBe(true);
      expect(retry.threadId).toBe(first.threadId);
      expect(retry.created).toBe(false);
      const other = result<{ threadId: string }>(
        await call('open_subthread', { title: 'side task' }, { toolCallId: 'toolu_other' }),
      );
      expect(other.threadId).not.toBe(first.threadId);
      const participants = await bot.listParticipants(first.threadId);
      expect(participants.map((grant) => [grant.principalId, grant.role])).toEqual([[world.botId, 'owner']]);
    });

    it('is refused under a thread the bot cannot read', async () => {
      expectRefused(
        await call(
          'open_subthread',
          { parentThreadId: privateThread },
          { ...inPrivateRun(), toolCallId: 'toolu_private' },
        ),
      );
    });
  });

  describe('invite_to_thread and search_principals', () => {
    it('invites as member only; the input has no role', async () => {
      const withRole = await call('invite_to_thread', { principalId: 'bob', role: 'owner' });
      expect(withRole.ok).toBe(false);
      if (!withRole.ok) expect(withRole.error.code).toBe('invalid_input');

      // bob is not visible to the bot yet: not in a thread the bot reads.
      expect(result<{ principals: unknown[] }>(await call('search_principals', { query: 'bob' })).principals).toEqual(
        [],
      );

      // The bot owns its subthread, and still can only make members.
      const child = result<{ threadId: string }>(await call('open_subthread', {}, { toolCallId: 'toolu_invite' }));
      await world.alice.addParticipant(shared, 'bob', 'member');
      await bobClient.acceptInvitation(shared);
      const invited = result<{ role: string; invited: boolean }>(
        await call('invite_to_thread', { principalId: 'bob', threadId: child.threadId }),
      );
      expect(invited).toMatchObject({ status: 'added', role: 'member', invited: true });
      const grants = await bot.listParticipants(child.threadId);
      expect(grants.find((grant) => grant.principalId === 'bob')?.role).toBe('member');

      const found = result<{ principals: Array<{ principalId: string; displayName: string }> }>(
        await call('search_principals', { query: 'build' }),
      );
      expect(found.principals).toEqual([{ principalId: 'bob', kind: 'human', displayName: 'Bob Builder' }]);
    });

    it('says a person it cannot see was only sent an invitation, exactly as for an id that does not exist', async () => {
      const erinToken = (await world.server.createHuman('erin-tool', 'Erin')).token.token;
      const known = result<Record<string, unknown>>(await call('invite_to_thread', { principalId: 'erin-tool' }));
      const unknown = result<Record<string, unknown>>(await call('invite_to_thread', { principalId: 'erin-toox' }));
      expect(known).toEqual({
        threadId: shared,
        principalId: 'erin-tool',
        status: 'pending',
        invited: true,
        note: 'invitation sent; they must accept before they are in the thread (nothing is known about them until then)',
      });
      expect({ ...unknown, principalId: 'erin-tool' }).toEqual(known);
      // Not on the thread: the tool did not claim otherwise, and nothing was added.
      expect((await bot.listParticipants(shared)).map((g) => g.principalId)).not.toContain('erin-tool');
      const erin = new BubbleClient({ url: world.server.url, token: erinToken });
      expect((await erin.listInvitations()).map((i) => [i.threadId, i.invitedBy])).toEqual([[shared, world.botId]]);
      await erin.acceptInvitation(shared);
      expect((await bot.listParticipants(shared)).map((g) => g.principalId)).toContain('erin-tool');
    });

    it('leaves an existing participant as it is (an owner is not demoted)', async () => {
      const outcome = result<{ role: string; invited: boolean }>(
        await call('invite_to_thread', { principalId: 'alice' }),
      );
      expect(outcome).toMatchObject({ status: 'already_participant', role: 'owner', invited: false });
      const grants = await world.alice.listParticipants(shared);
      expect(grants.find((grant) => grant.principalId === 'alice')?.role).toBe('owner');
    });

    it('is refused on a thread the bot is not in, and cannot reach principals it cannot see', async () => {
      expectRefused(await call('invite_to_thread', { principalId: 'bob', threadId: privateThread }, inPrivateRun()));
      expect(result<{ principals: unknown[] }>(await call('search_principals', { query: 'carol' })).principals).toEqual(
        [],
      );
    });
  });

  describe('artifacts tools', () => {
    it('write, read, list, and a stale baseVersion is a conflict', async () => {
      const written = result<{ version: number }>(
        await call('write_artifact', { name: 'plan.md', content: '# Plan\n', baseVersion: 0 }),
      );
      expect(written.version).toBe(1);
      const second = result<{ version: number }>(
        await call('write_artifact', { name: 'plan.md', content: '# Plan v2\n', baseVersion: 1 }),
      );
      expect(second.version).toBe(2);
      const stale = await call('write_artifact', { name: 'plan.md', content: 'lost update', baseVersion: 1 });
      expect(stale.ok).toBe(false);
      if (!stale.ok) expect(stale.error).toMatchObject({ code: 'conflict', status: 409 });

      const read = result<{ artifact: { content: string; version: number; mediaType: string } }>(
        await call('read_artifact', { name: 'plan.md' }),
      );
      expect(read.artifact).toMatchObject({ content: '# Plan v2\n', version: 2, mediaType: 'text/markdown' });
      const first = result<{ artifact: { content: string } }>(
        await call('read_artifact', { name: 'plan.md', version: 1 }),
      );
      expect(first.artifact.content).toBe('# Plan\n');
      const list = result<{ artifacts: Array<{ name: string; version: number; updatedBy: string }> }>(
        await call('list_artifacts', {}),
      );
      expect(list.artifacts).toEqual([
        expect.objectContaining({ name: 'plan.md', version: 2, updatedBy: world.botId }),
      ]);
    });

    it('is refused on a thread the bot cannot read', async () => {
      expectRefused(await call('list_artifacts', { threadId: privateThread }, inPrivateRun()));
      expectRefused(
        await call('write_artifact', { threadId: privateThread, name: 'x.md', content: 'x' }, inPrivateRun()),
      );
    });
  });

  describe("scope: a run's tools act on its thread and its subthreads only", () => {
    /** The bot's client, recording every request a tool makes. */
    function recordingClient(): { client: ToolClient; calls: string[] } {
      const calls: string[] = [];
      const client = new Proxy(bot, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push(String(property));
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      return { client, calls };
    }

    function expectOutOfScope(outcome: ToolOutcome, asked: string): void {
      expect(outcome).toEqual({
        ok: false,
        error: {
          code: 'thread_out_of_scope',
          message: `thread ${asked} is not this run's thread: here the tools act only on ${shared} and its subthreads (${shared}.sub-…)`,
        },
      });
    }

    it.each([
      ['browse_thread', { threadId: 'OTHER' }],
      ['invite_to_thread', { principalId: 'dave', threadId: 'OTHER' }],
      ['open_subthread', { parentThreadId: 'OTHER' }],
      ['list_artifacts', { threadId: 'OTHER' }],
      ['read_artifact', { name: 'plan.md', threadId: 'OTHER' }],
      ['write_artifact', { name: 'x.md', content: 'x', baseVersion: 0, threadId: 'OTHER' }],
    ])('working in A, %s on B (a thread the bot is on too) is refused before any request', async (name, raw) => {
      const { client, calls } = recordingClient();
      const input = { ...raw, ...('threadId' in raw ? { threadId: other } : { parentThreadId: other }) };
      expectOutOfScope(await call(name, input, { client, toolCallId: `toolu_scope_${name}` }), other);
      expect(calls).toEqual([]);
    });

    it('B is untouched: nobody invited, no artifact', async () => {
      const grants = await world.alice.listParticipants(other);
      expect(grants.map((grant) => grant.principalId).sort()).toEqual(['alice', 'dave', world.botId].sort());
      expect(await world.alice.listArtifacts(other)).toEqual([]);
    });

    it('the same calls work in a run on B', async () => {
      const page = result<{ threadId: string }>(
        await call('browse_thread', { threadId: other }, { runThreadId: other, threadId: other }),
      );
      expect(page.threadId).toBe(other);
    });

    it("a subthread of A's subthread is in scope; a sub-agent in A's subthread reaches A, not B", async () => {
      const child = result<{ threadId: string }>(await call('open_subthread', {}, { toolCallId: 'toolu_scope_child' }));
      const grandchild = result<{ threadId: string; parentThreadId: string }>(
        await call('open_subthread', { parentThreadId: child.threadId }, { toolCallId: 'toolu_scope_grandchild' }),
      );
      expect(grandchild.parentThreadId).toBe(child.threadId);
      expect(grandchild.threadId.startsWith(`${child.threadId}.sub-`)).toBe(true);
      expect(
        result<{ threadId: string }>(await call('browse_thread', { threadId: grandchild.threadId })).threadId,
      ).toBe(grandchild.threadId);
      const fromSubagent = { threadId: child.threadId };
      expect(result<{ threadId: string }>(await call('browse_thread', {}, fromSubagent)).threadId).toBe(child.threadId);
      expect(
        result<{ threadId: string }>(await call('browse_thread', { threadId: shared }, fromSubagent)).threadId,
      ).toBe(shared);
      expectOutOfScope(await call('browse_thread', { threadId: other }, fromSubagent), other);
    });

    it('a call whose own thread is outside the run is refused, even with no thread in its input', async () => {
      const { client, calls } = recordingClient();
      expectOutOfScope(await call('browse_thread', {}, { client, threadId: other }), other);
      expect(calls).toEqual([]);
    });

    it("search_principals finds only the run's thread's participants", async () => {
      // dave is on B with the bot, so Bubble lets the bot see him; working in A, the tool does not show him.
      expect((await bot.searchPrincipals({ query: 'dave' })).map((principal) => principal.principalId)).toEqual([
        'dave',
      ]);
      expect(result<{ principals: unknown[] }>(await call('search_principals', { query: 'dave' })).principals).toEqual(
        [],
      );
      const everyone = result<{ principals: Array<{ principalId: string }> }>(await call('search_principals', {}));
      expect(everyone.principals.map((principal) => principal.principalId)).not.toContain('dave');
      expect(everyone.principals.map((principal) => principal.principalId)).toContain('alice');
      const inB = result<{ principals: Array<{ principalId: string }> }>(
        await call('search_principals', { query: 'dave' }, { runThreadId: other, threadId: other }),
      );
      expect(inB.principals).toEqual([{ principalId: 'dave', kind: 'human', displayName: 'Dave Other' }]);
    });
  });
});
