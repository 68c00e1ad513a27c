import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import type { NewEvent } from '@bubble/protocol';
import { startTestServer, type TestServer } from '@bubble/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BubbleClient } from '../src/index.js';
import { runBubble, spawnBubble, TailProcess } from './support/run-bubble-cli.js';

let server: TestServer;
let aliceToken: string;
let alice: BubbleClient;
let env: Record<string, string>;
let bobToken: string;

beforeAll(async () => {
  server = await startTestServer();
  aliceToken = (await server.createHuman('alice', 'Alice')).token.token;
  bobToken = (await server.createHuman('bob', 'Bob')).token.token;
  alice = new BubbleClient({ url: server.url, token: aliceToken });
  env = { BUBBLE_URL: server.url, BUBBLE_TOKEN: aliceToken };
});

/** A loopback port nothing listens on (bound, then let go). */
function closedPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

/** The chunks a bot writes when a call waits for a person: the call, then its approval request. */
function asksApproval(runId: string, toolCallId: string, approvers: string[], approvalId = toolCallId): NewEvent[] {
  return [
    {
      type: 'message_part',
      data: { runId, chunk: { type: 'tool-input-available', toolCallId, toolName: 'Bash', input: { command: 'ls' } } },
    },
    {
      type: 'message_part',
      data: {
        runId,
        chunk: { type: 'tool-approval-request', approvalId, toolCallId, providerMetadata: { bubble: { approvers } } },
      },
    },
  ];
}

afterAll(async () => {
  alice?.close();
  await server?.stop();
});

describe('bubble CLI against the real server', () => {
  it('whoami and threads', async () => {
    const whoami = await runBubble(['whoami'], env);
    expect(whoami).toMatchObject({ code: 0, stdout: 'alice\thuman\tAlice\n' });
    const { thread } = await alice.createThread({ title: 'listed' });
    const threads = await runBubble(['threads'], env);
    expect(threads.code).toBe(0);
    expect(threads.stdout.split('\n')).toContain(`${thread.threadId}\t1\tlisted`);
  });

  it('new prints the thread id and invites members; --url/--token beat the environment', async () => {
    const result = await runBubble(
      ['--url', server.url, '--token', aliceToken, 'new', '--title', 'Planning', '--invite', 'bob'],
      {
        BUBBLE_URL: 'http://127.0.0.1:9',
        BUBBLE_TOKEN: 'bubble_user_wrong',
      },
    );
    expect(result.code).toBe(0);
    const threadId = result.stdout.trim();
    expect(threadId).toMatch(/^th_/);
    expect((await alice.getThread(threadId)).title).toBe('Planning');
    // alice cannot see bob yet (Consent): he is invited, and is on the thread once he accepts.
    expect(result.stderr).toContain('bubble: invited bob (pending): they must accept');
    expect((await alice.listParticipants(threadId)).map((g) => g.principalId)).toEqual(['alice']);
    const bobEnv = { BUBBLE_URL: server.url, BUBBLE_TOKEN: bobToken };
    const listed = await runBubble(['invitations'], bobEnv);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const [id, by, role, createdAt, title] = lines[0]!.split('\t');
    expect([id, by, role, title]).toEqual([threadId, 'alice', 'member', 'Planning']);
    expect(Number.isNaN(Date.parse(createdAt!))).toBe(false);
    const accepted = await runBubble(['invitations', 'accept', threadId], bobEnv);
    expect(accepted).toMatchObject({ code: 0, stdout: `${threadId}\tmember\t2\n` });
    expect(accepted.stderr).toContain(`joined ${threadId}, invited by alice`);
    expect((await alice.listParticipants(threadId)).map((g) => `${g.principalId}:${g.role}`).sort()).toEqual([
      'alice:owner',
      'bob:member',
    ]);
    // Now that alice sees bob, inviting him to another thread adds him at once.
    const again = await runBubble(['new', '--invite', 'bob'], env);
    expect(again.stderr).toContain('bubble: added bob');

    // A failed invitation still reports the thread it created.
    const partly = await runBubble(['new', '--invite', 'Not-An-Id!'], env);
    expect(partly.code).toBe(1);
    const created = partly.stdout.trim();
    expect(created).toMatch(/^th_/);
    expect(partly.stderr).toContain(`thread ${created} was created, but inviting Not-An-Id! failed`);
  });

  it('invite says "invited (pending)" for anyone alice cannot see, the same for an unknown id; invitations decline drops it', async () => {
    const { thread } = await alice.createThread({ title: 'pending' });
    await server.createHuman('erin-cli', 'Erin');
    const erinToken = (await server.createHuman('erin-cli2', 'Erin two')).token.token;
    const known = await runBubble(['invite', thread.threadId, 'erin-cli2'], env);
    const unknown = await runBubble(['invite', thread.threadId, 'erin-cli3'], env);
    expect(known).toMatchObject({ code: 0, stdout: 'erin-cli2\tinvited (pending)\n' });
    expect(unknown).toMatchObject({ code: 0, stdout: 'erin-cli3\tinvited (pending)\n' });
    expect(known.stderr.replace('erin-cli2', 'X')).toBe(unknown.stderr.replace('erin-cli3', 'X'));
    const erinEnv = { BUBBLE_URL: server.url, BUBBLE_TOKEN: erinToken };
    const declined = await runBubble(['invitations', 'decline', thread.threadId], erinEnv);
    expect(declined).toMatchObject({ code: 0, stdout: '' });
    expect(declined.stderr).toContain(`declined the invitation to ${thread.threadId}`);
    expect(await runBubble(['invitations'], erinEnv)).toMatchObject({ code: 0, stdout: '' });
    expect((await runBubble(['invitations', 'accept', thread.threadId], erinEnv)).code).toBe(1);
    expect((await alice.listParticipants(thread.threadId)).map((g) => g.principalId)).toEqual(['alice']);
  });

  it('say appends one complete run and prints its id; tail --once renders it', async () => {
    const { thread } = await alice.createThread({ title: 'chat' });
    const said = await runBubble(['say', thread.threadId, 'hello', 'there'], env);
    expect(said.code).toBe(0);
    const runId = said.stdout.trim();
    expect(runId).toMatch(/^run_/);
    const log = await alice.readEvents(thread.threadId, { after: 1 });
    expect(
      log.events.map((e) => [e.type, (e.data.chunk as { type?: string } | undefined)?.type ?? null, e.data.runId]),
    ).toEqual([
      ['run_started', null, runId],
      ['message_part', 'text-start', runId],
      ['message_part', 'text-delta', runId],
      ['message_part', 'text-end', runId],
      ['run_finished', null, runId],
    ]);
    const tail = await runBubble(['tail', thread.threadId, '--once'], env);
    expect(tail).toMatchObject({
      code: 0,
      stdout: '#1 * alice joined as owner (added by alice)\n#3 alice: hello there\n',
    });
    const after = await runBubble(['tail', thread.threadId, '--once', '--after', '1'], env);
    expect(after.stdout).toBe('#3 alice: hello there\n');
  });

  it('approve, deny and stop append the events a bot waits for', async () => {
    const { thread } = await alice.createThread({ title: 'tools' });
    const { token } = await alice.createBot({ principalId: 'bot-asks' });
    await alice.addParticipant(thread.threadId, 'bot-asks');
    const bot = new BubbleClient({ url: server.url, token: token.token });
    await bot.appendEvents(thread.threadId, [
      { type: 'run_started', data: { runId: 'run_tools' } },
      ...['tc_1', 'tc_2'].flatMap((toolCallId) => asksApproval('run_tools', toolCallId, ['alice'])),
      { type: 'run_started', data: { runId: 'run_x' } },
    ]);
    bot.close();
    const { headSeq } = await alice.getThread(thread.threadId);
    expect((await runBubble(['approve', thread.threadId, 'tc_1'], env)).code).toBe(0);
    expect((await runBubble(['deny', thread.threadId, 'tc_2', '--reason', 'not today'], env)).code).toBe(0);
    expect((await runBubble(['stop', thread.threadId, 'run_x', '--reason', 'enough'], env)).code).toBe(0);
    const log = await alice.readEvents(thread.threadId, { after: headSeq });
    expect(log.events.map((e) => [e.type, e.data])).toEqual([
      ['tool_call_approval', { toolCallId: 'tc_1', decision: 'allow' }],
      ['tool_call_approval', { toolCallId: 'tc_2', decision: 'deny', reason: 'not today' }],
      ['run_interrupt_requested', { runId: 'run_x', reason: 'enough' }],
    ]);
  });

  it('approve, deny and stop refuse what the thread does not hold open, say why, and write nothing', async () => {
    const { thread } = await alice.createThread({ title: 'stale ids' });
    const t = thread.threadId;
    const { token } = await alice.createBot({ principalId: 'bot-stale' });
    await alice.addParticipant(t, 'bot-stale');
    const bob = await server.createHuman('bob-stale', 'Bob');
    await alice.addParticipant(t, 'bob-stale');
    await new BubbleClient({ url: server.url, token: bob.token.token }).acceptInvitation(t);
    const bot = new BubbleClient({ url: server.url, token: token.token });
    await bot.appendEvents(t, [
      { type: 'run_started', data: { runId: 'r1' } },
      ...asksApproval('r1', 'tc_answered', ['alice']),
      // Asked for nothing: ran without asking.
      {
        type: 'message_part',
        data: {
          runId: 'r1',
          chunk: { type: 'tool-input-available', toolCallId: 'tc_free', toolName: 'Read', input: {} },
        },
      },
      ...asksApproval('r1', 'tc_settled', ['alice']),
      {
        type: 'message_part',
        data: { runId: 'r1', chunk: { type: 'tool-output-available', toolCallId: 'tc_settled', output: 'x' } },
      },
      ...asksApproval('r1', 'tc_alice_only', ['alice']),
      ...asksApproval('r1', 'tc_by_approval_id', ['alice'], 'ap_by_approval_id'),
      { type: 'run_started', data: { runId: 'r2' } },
      ...asksApproval('r2', 'tc_run_ended', ['alice']),
      { type: 'run_finished', data: { runId: 'r2', status: 'completed' } },
    ]);
    bot.close();
    expect((await runBubble(['approve', t, 'tc_answered'], env)).code).toBe(0);
    const head = (await alice.getThread(t)).headSeq;
    const bobEnv = { BUBBLE_URL: server.url, BUBBLE_TOKEN: bob.token.token! };
    const refusals: Array<[string[], Record<string, string>, string]> = [
      [['approve', t, 'tc_made_up'], env, `no tool call tc_made_up waits for approval on thread ${t}`],
      [['deny', t, 'tc_answered'], env, 'tool call tc_answered was already answered: approved by alice (#'],
      [['approve', t, 'tc_free'], env, 'tool call tc_free did not ask for approval'],
      [['approve', t, 'tc_settled'], env, 'tool call tc_settled has already ended'],
      [['deny', t, 'tc_run_ended'], env, 'tool call tc_run_ended no longer waits: its run r2 ended (completed, #'],
      [['approve', t, 'tc_alice_only'], bobEnv, 'bob-stale may not answer tool call tc_alice_only: only alice may'],
      [['stop', t, 'run_made_up'], env, `no run run_made_up on thread ${t}`],
      [['stop', t, 'r2'], env, 'run r2 has already ended (completed, #'],
    ];
    for (const [args, as, reason] of refusals) {
      const refused = await runBubble(args, as);
      expect({ args, code: refused.code, stdout: refused.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(refused.stderr).toContain(`bubble: ${reason}`);
      expect(refused.stderr).toMatch(/; nothing was written\n$/);
    }
    expect((await alice.getThread(t)).headSeq).toBe(head);

    // A request's approvalId names its call too; the answer names the toolCallId the bot waits on.
    expect((await runBubble(['approve', t, 'ap_by_approval_id'], env)).code).toBe(0);
    const [answer] = (await alice.readEvents(t, { after: head })).events;
    expect(answer!.data).toEqual({ toolCallId: 'tc_by_approval_id', decision: 'allow' });
  });

  it('invite grants membership; bots create prints a working token once', async () => {
    const { thread } = await alice.createThread({ title: 'bots' });
    const created = await runBubble(['bots', 'create', 'bot-cli', '--name', 'CLI bot'], env);
    expect(created.code).toBe(0);
    const botToken = created.stdout.trim();
    expect(botToken).toMatch(/^bubble_agent_/);
    expect(created.stderr).toContain('shown only once');
    const invited = await runBubble(['invite', thread.threadId, 'bot-cli'], env);
    expect(invited).toMatchObject({ code: 0, stdout: 'bot-cli\tmember\t2\n' });
    const again = await runBubble(['invite', thread.threadId, 'bot-cli'], env);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('already was a participant');
    const asBot = await runBubble(['threads'], { BUBBLE_URL: server.url, BUBBLE_TOKEN: botToken });
    expect(asBot.stdout).toBe(`${thread.threadId}\t2\tbots\n`);
  });

  it('bots joinable switches who may add a bot, and says what it means', async () => {
    await alice.createBot({ principalId: 'bot-joinable' });
    const bob = await server.createHuman('bob-joinable', 'Bob');
    const bobClient = new BubbleClient({ url: server.url, token: bob.token.token! });
    const { thread } = await bobClient.createThread({ title: "bob's" });
    // Bob cannot see the bot yet: adding it is answered as for an unknown id, and does nothing.
    expect((await bobClient.addParticipant(thread.threadId, 'bot-joinable')).status).toBe('pending');
    expect((await bobClient.listParticipants(thread.threadId)).map((g) => g.principalId)).toEqual(['bob-joinable']);
    // He sees it once it shares a thread of alice's with him; still only its owners may add it.
    const { thread: together } = await alice.createThread({ title: 'together' });
    await alice.addParticipant(together.threadId, 'bot-joinable');
    await alice.addParticipant(together.threadId, 'bob-joinable');
    await bobClient.acceptInvitation(together.threadId);
    await expect(bobClient.addParticipant(thread.threadId, 'bot-joinable')).rejects.toMatchObject({ status: 403 });

    const open = await runBubble(['bots', 'joinable', 'bot-joinable', 'anyone'], env);
    expect(open).toMatchObject({ code: 0, stdout: 'bot-joinable\tanyone\n' });
    expect(open.stderr).toContain(
      "anyone on a thread may now add bot-joinable; it acts and spends on its owners' behalf",
    );
    expect((await bobClient.addParticipant(thread.threadId, 'bot-joinable')).created).toBe(true);

    const closed = await runBubble(['bots', 'joinable', 'bot-joinable', 'owners'], env);
    expect(closed).toMatchObject({ code: 0, stdout: 'bot-joinable\towners\n' });
    expect(closed.stderr).toContain("only bot-joinable's owners may add it to threads now");
    const { thread: second } = await bobClient.createThread({ title: 'second' });
    await expect(bobClient.addParticipant(second.threadId, 'bot-joinable')).rejects.toMatchObject({
      status: 403,
      code: 'forbidden',
    });

    // Only an owner may switch it.
    const asBob = await runBubble(['bots', 'joinable', 'bot-joinable', 'anyone'], {
      BUBBLE_URL: server.url,
      BUBBLE_TOKEN: bob.token.token!,
    });
    expect(asBob.code).toBe(1);
    expect(asBob.stderr).toContain('only an owner of bot-joinable');
    bobClient.close();
  });

  it('tail follows live, renders tool calls and approvals, and keeps following through a server restart', async () => {
    const { thread } = await alice.createThread({ title: 'live tail' });
    const { token } = await alice.createBot({ principalId: 'bot-tail' });
    await alice.addParticipant(thread.threadId, 'bot-tail');
    const bot = new BubbleClient({
      url: server.url,
      token: token.token,
      retry: { attempts: 30, baseMs: 25, capMs: 250 },
    });
    const tail = new TailProcess(spawnBubble(['tail', thread.threadId], env));
    try {
      await tail.waitForLine((l) => l.includes('bot-tail joined as member'), 'the bot joining');
      await bot.appendEvents(thread.threadId, [
        { type: 'run_started', data: { runId: 'r1' } },
        { type: 'message_part', data: { runId: 'r1', chunk: { type: 'reasoning-start', id: 'a' } } },
        {
          type: 'message_part',
          data: { runId: 'r1', chunk: { type: 'reasoning-delta', id: 'a', delta: 'checking the file' } },
        },
        { type: 'message_part', data: { runId: 'r1', chunk: { type: 'reasoning-end', id: 'a' } } },
        {
          type: 'message_part',
          data: {
            runId: 'r1',
            chunk: { type: 'tool-input-available', toolCallId: 'tc_7', toolName: 'Read', input: { path: 'notes.md' } },
          },
        },
        {
          type: 'message_part',
          data: {
            runId: 'r1',
            chunk: {
              type: 'tool-approval-request',
              approvalId: 'tc_7',
              toolCallId: 'tc_7',
              providerMetadata: { bubble: { approvers: ['alice'] } },
            },
          },
        },
      ]);
      await tail.waitForLine((l) => l.includes('→ tool Read [tc_7]'), 'the tool call');
      expect((await runBubble(['approve', thread.threadId, 'tc_7'], env)).code).toBe(0);
      await tail.waitForLine((l) => l.includes('alice approved tool call tc_7'), 'the approval');

      await server.restart();
      await bot.appendEvents(thread.threadId, [
        {
          type: 'message_part',
          data: { runId: 'r1', chunk: { type: 'tool-output-available', toolCallId: 'tc_7', output: 'three lines' } },
        },
        { type: 'message_part', data: { runId: 'r1', chunk: { type: 'text-start', id: 't' } } },
        { type: 'message_part', data: { runId: 'r1', chunk: { type: 'text-delta', id: 't', delta: 'The file has ' } } },
        { type: 'message_part', data: { runId: 'r1', chunk: { type: 'text-delta', id: 't', delta: 'three lines.' } } },
        { type: 'message_part', data: { runId: 'r1', chunk: { type: 'text-end', id: 't' } } },
        { type: 'run_finished', data: { runId: 'r1', status: 'completed' } },
      ]);
      await tail.waitForLine(
        (l) => l.endsWith('bot-tail: The file has three lines.'),
        'the joined answer after the restart',
      );
      await tail.waitForStderr('reconnected');
      tail.child.kill('SIGINT');
      expect(await tail.exited).toBe(0);
      expect(tail.lines).toEqual([
        '#1 * alice joined as owner (added by alice)',
        '#2 * bot-tail joined as member (added by alice)',
        '#4 bot-tail (thinking): checking the file',
        '#7 bot-tail → tool Read [tc_7] input: {"path":"notes.md"}',
        '#8 bot-tail ? tool call tc_7 waits for approval',
        '#9 alice approved tool call tc_7',
        '#10 bot-tail ← tool [tc_7] output: "three lines"',
        '#11 bot-tail: The file has three lines.',
      ]);
    } finally {
      tail.child.kill('SIGKILL');
      bot.close();
    }
  });

  it('tail exits 5 when the server ends the subscription', async () => {
    const { thread } = await alice.createThread({ title: 'revoked' });
    const bobToken = (await server.createHuman('bob-tail')).token.token;
    await alice.addParticipant(thread.threadId, 'bob-tail');
    await new BubbleClient({ url: server.url, token: bobToken }).acceptInvitation(thread.threadId);
    const tail = new TailProcess(
      spawnBubble(['tail', thread.threadId], { BUBBLE_URL: server.url, BUBBLE_TOKEN: bobToken }),
    );
    await tail.waitForLine((l) => l.includes('bob-tail joined'), 'bob joining');
    await alice.removeParticipant(thread.threadId, 'bob-tail');
    expect(await tail.exited).toBe(5);
    expect(tail.stderr).toContain('the server ended the subscription: grant_revoked');
  });

  it('fails clearly with documented exit codes', async () => {
    const badToken = await runBubble(['threads'], { BUBBLE_URL: server.url, BUBBLE_TOKEN: 'bubble_user_nope' });
    expect(badToken.code).toBe(3);
    expect(badToken.stderr).toMatch(/^bubble: not authorized: .+ \(check --token or BUBBLE_TOKEN\)\n$/);
    expect(badToken.stdout).toBe('');

    const badTail = await runBubble(['tail', 'th_whatever'], {
      BUBBLE_URL: server.url,
      BUBBLE_TOKEN: 'bubble_user_nope',
    });
    expect(badTail.code).toBe(3);

    const noToken = await runBubble(['threads'], { BUBBLE_URL: server.url });
    expect(noToken).toMatchObject({ code: 3, stderr: 'bubble: no token: pass --token or set BUBBLE_TOKEN\n' });

    const missing = await runBubble(['say', 'th_missing', 'hi'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('bubble: not_found: thread th_missing not found\n');

    const usage = await runBubble(['say'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('say needs <threadId> <text>');

    const unreachable = await runBubble(['threads'], { BUBBLE_URL: 'http://127.0.0.1:9', BUBBLE_TOKEN: aliceToken });
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toContain('cannot reach the server at http://127.0.0.1:9');
    expect(unreachable.stderr).toContain('fetch refuses to connect to that port');

    const closed = `http://127.0.0.1:${await closedPort()}`;
    const refused = await runBubble(['threads'], { BUBBLE_URL: closed, BUBBLE_TOKEN: aliceToken });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(
      `bubble: cannot reach the server at ${closed}: nothing is listening there (connection refused). Is Bubble running? Start it with npm start, or point --url (BUBBLE_URL) at it\n`,
    );

    const unknownHost = await runBubble(['threads'], {
      BUBBLE_URL: 'http://bubble.invalid:7777',
      BUBBLE_TOKEN: aliceToken,
    });
    expect(unknownHost.code).toBe(4);
    expect(unknownHost.stderr).toMatch(
      /the host name does not resolve \((ENOTFOUND|EAI_AGAIN)\); check --url \(BUBBLE_URL\)/,
    );

    // Something that is not Bubble at that address (another site, a wrong path).
    const other = createHttpServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const notBubble = await runBubble(['threads'], { BUBBLE_URL: otherUrl, BUBBLE_TOKEN: aliceToken });
      expect(notBubble.code).toBe(1);
      expect(notBubble.stderr).toBe(
        `bubble: ${otherUrl} answered HTTP 404, not as a Bubble server; is --url (BUBBLE_URL) the server's base address? (HTTP 404: <h1>Not Found</h1>)\n`,
      );
    } finally {
      other.close();
    }

    const taken = await runBubble(['bots', 'create', 'alice'], env);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^bubble: conflict: /);
  });
});
