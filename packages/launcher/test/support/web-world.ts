import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent, RunUsage } from '@bubble/protocol';
import { BubbleClient } from '@bubble/sdk';
import { createBubbleServer, createHumanPrincipal, type BubbleServer } from '@bubble/server';
import type { Page } from 'playwright-core';
import { DEFAULT_WEB_ROOT } from '../../src/launch.js';

/**
 * The real server serving the built web UI, with people and bots made through its API, and
 * bots that write what a test needs (a streamed reply, a tool call waiting for approval, a
 * run's usage) through the same API a bot uses. No model, no CLI: what the page shows depends
 * only on the events, so each scroll and signal case is exact.
 */
export interface WebWorld {
  readonly server: BubbleServer;
  readonly url: string;
  /** A human, and a client signed in as them. */
  human(principalId: string, displayName: string): Promise<{ token: string; client: BubbleClient }>;
  /** A bot owned by `owner`, and a client signed in as it. */
  bot(owner: BubbleClient, principalId: string, displayName: string): Promise<{ token: string; client: BubbleClient }>;
  /** The sign-in link for a token, landing on `path`. */
  link(token: string, path?: string): string;
  stop(): Promise<void>;
}

export async function startWebWorld(options: { webRoot?: string } = {}): Promise<WebWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'bubble-web-'));
  const server = await createBubbleServer({
    dataDir: join(dir, 'data'),
    host: '127.0.0.1',
    port: 0,
    webRoot: options.webRoot ?? DEFAULT_WEB_ROOT,
    // Tests write thousands of events from one principal: the defaults would (rightly) slow that down.
    rateLimits: { requests: false, frames: false },
    shutdownGraceMs: 1_000,
  });
  const clients: BubbleClient[] = [];
  const client = (token: string) => {
    const c = new BubbleClient({ url: server.url, token });
    clients.push(c);
    return c;
  };
  return {
    server,
    url: server.url,
    async human(principalId, displayName) {
      const token = (await createHumanPrincipal(server.store, principalId, displayName)).token.token;
      return { token, client: client(token) };
    },
    async bot(owner, principalId, displayName) {
      const { token } = await owner.createBot({ principalId, displayName });
      return { token: token.token ?? '', client: client(token.token ?? '') };
    },
    link: (token, path = '/') => `${server.url}${path}#token=${token}`,
    async stop() {
      for (const c of clients) c.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let runs = 0;
const nextRunId = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(runs += 1)}`;

/** One whole message (a run with one text part), in one batch. */
export function messageEvents(runId: string, text: string, usage?: RunUsage): NewEvent[] {
  return [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: text } } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
    { type: 'run_finished', data: { runId, status: 'completed', ...(usage ? { usage } : {}) } },
  ];
}

export async function say(client: BubbleClient, threadId: string, text: string, usage?: RunUsage): Promise<string> {
  const runId = nextRunId('run');
  await client.appendEvents(threadId, messageEvents(runId, text, usage));
  return runId;
}

/** Many messages at once (batches of 500 events), alternating between two writers. */
export async function fill(
  writers: readonly BubbleClient[],
  threadId: string,
  count: number,
  text: (n: number) => string,
): Promise<void> {
  let batch: { client: BubbleClient; events: NewEvent[] } | undefined;
  for (let n = 0; n < count; n++) {
    const writer = writers[n % writers.length]!;
    if (batch !== undefined && (batch.client !== writer || batch.events.length + 5 > 500)) {
      await batch.client.appendEvents(threadId, batch.events);
      batch = undefined;
    }
    batch ??= { client: writer, events: [] };
    batch.events.push(...messageEvents(nextRunId('fill'), text(n)));
  }
  if (batch !== undefined) await batch.client.appendEvents(threadId, batch.events);
}

/** A bot's run that streams: `write` appends words to it, `finish` closes it. */
export async function startStream(client: BubbleClient, threadId: string) {
  const runId = nextRunId('stream');
  await client.appendEvents(threadId, [
    { type: 'run_started', data: { runId } },
    { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
  ]);
  return {
    runId,
    write: (delta: string) =>
      client.appendEvent(threadId, {
        type: 'message_part',
        data: { runId, chunk: { type: 'text-delta', id: 't', delta } },
      }),
    finish: (usage?: RunUsage) =>
      client.appendEvents(threadId, [
        { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
        { type: 'run_finished', data: { runId, status: 'completed', ...(usage ? { usage } : {}) } },
      ]),
  };
}

/**
 * A bot's run that asks to run a command and waits for one of `approvers` (protocol.md, "Tool
 * approvals"): the run stays open, as a bot's does while it waits.
 */
export async function askApproval(
  client: BubbleClient,
  threadId: string,
  input: {
    toolCallId: string;
    command: string;
    approvers: readonly string[];
    preface?: string;
    /** Another tool than Bash, with its own input (then `command` is not used). */
    tool?: { name: string; input: unknown };
  },
): Promise<string> {
  const runId = nextRunId('ask');
  const { toolCallId } = input;
  await client.appendEvents(threadId, [
    { type: 'run_started', data: { runId } },
    ...(input.preface
      ? ([
          { type: 'message_part', data: { runId, chunk: { type: 'text-start', id: 't' } } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-delta', id: 't', delta: input.preface } } },
          { type: 'message_part', data: { runId, chunk: { type: 'text-end', id: 't' } } },
        ] as NewEvent[])
      : []),
    {
      type: 'message_part',
      data: {
        runId,
        chunk: {
          type: 'tool-input-available',
          toolCallId,
          toolName: input.tool?.name ?? 'Bash',
          input: input.tool !== undefined ? input.tool.input : { command: input.command },
          dynamic: true,
        },
      },
    },
    {
      type: 'message_part',
      data: {
        runId,
        chunk: {
          type: 'tool-approval-request',
          approvalId: toolCallId,
          toolCallId,
          providerMetadata: { bubble: { approvers: [...input.approvers] } },
        },
      },
    },
  ]);
  return runId;
}

/** Where the conversation is scrolled: px from the bottom, and the scroller's sizes. */
export async function scrollState(page: Page) {
  return page.locator('[role="log"][aria-label="Messages"]').evaluate((el) => ({
    fromBottom: Math.round(el.scrollHeight - el.scrollTop - el.clientHeight),
    scrollTop: Math.round(el.scrollTop),
    scrollHeight: el.scrollHeight,
    clientHeight: el.clientHeight,
  }));
}

export const SHOTS = '/tmp/shots';

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`) });
}
