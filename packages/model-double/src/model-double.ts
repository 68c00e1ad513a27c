import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { apiErrorBody, rateLimitHeaders, API_ERRORS } from './api-errors.js';
import { midStreamErrorEvents, planReply } from './reply-plan.js';
import { describeMessagesRequest, estimateTokens, isRecord, type RequestInfo } from './request-info.js';
import { type Completion, waitUnlessGone, writeJson, writeSse } from './respond.js';
import { CONTROL_PREFIX, handleControl } from './control-routes.js';
import type { RecordedRequest } from './recorded-request.js';

export type { RecordedRequest } from './recorded-request.js';
import { parseScript } from './parse-script.js';
import type { ErrorStatus, ReplyBlock, Rule, Script } from './script.js';
import { selectRule } from './select-rule.js';

export interface ModelDoubleOptions {
  script?: Script;
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  host?: string;
  logger?: Logger;
  /**
   * Keep at most this many recorded requests (the oldest are dropped). Default:
   * all. A long-running double (the offline demo) should set it: bodies carry
   * the whole conversation.
   */
  maxRecorded?: number;
}

export interface ModelDouble {
  /** `http://HOST:PORT`, no trailing slash: the value for ANTHROPIC_BASE_URL. */
  readonly url: string;
  /** Every request received, live, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Replaces the script (validated) and resets every rule's use count. */
  setScript(script: Script | null): void;
  /** Resolves with the first recorded request (past or future) that satisfies `predicate`. */
  waitForRequest(
    predicate: (r: RecordedRequest) => boolean,
    options?: { timeoutMs?: number },
  ): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export const OFFLINE_REPLY =
  "Hi! I'm Bubble's offline model double, a scripted stand-in for the model, not Claude. " +
  'No Claude credentials are configured, so this is a canned reply. ' +
  'Set CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`) or ANTHROPIC_API_KEY to talk to Claude.';
export const TITLE_REPLY = JSON.stringify({ title: 'Chat with the model double' });
export const SUGGESTION_REPLY = 'continue';
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export async function startModelDouble(options: ModelDoubleOptions = {}): Promise<ModelDouble> {
  const logger = options.logger ?? pino({ level: 'silent' });
  const requests: RecordedRequest[] = [];
  const watchers = new Set<() => void>();
  let script: Script | null = options.script === undefined ? null : parseScript(options.script);
  let used: number[] = [];
  let nextSeq = 0;
  const maxRecorded = options.maxRecorded ?? Number.POSITIVE_INFINITY;
  const setScript = (next: Script | null): void => {
    script = next === null ? null : parseScript(next);
    used = [];
  };

  const notify = (): void => {
    for (const w of [...watchers]) w();
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, 'model double: request handler failed');
      if (!res.headersSent) {
        writeJson(res, 500, apiErrorBody(500, newId('req_')), {}).catch(() => undefined);
      } else {
        res.destroy();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double.invalid');
    if (url.pathname.startsWith(CONTROL_PREFIX)) {
      const raw = await readBody(req);
      return handleControl(req, res, url.pathname, raw ?? Buffer.alloc(0), { requests, setScript });
    }
    const record: RecordedRequest = {
      seq: nextSeq++,
      requestId: newId('req_'),
      receivedAt: Date.now(),
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search,
      headers: { ...req.headers },
      body: null,
      kind: 'other',
      stream: false,
      model: null,
      lastUserText: '',
      toolResults: [],
      subagent: false,
      sessionId: null,
      taskNotification: null,
      rule: null,
      unmatched: false,
      status: 0,
      completion: 'pending',
    };
    requests.push(record);
    while (requests.length > maxRecorded) requests.shift();
    const headers = { 'request-id': record.requestId };
    const done = (status: number, completion: Completion | 'disconnected'): void => {
      record.status = status;
      record.completion = completion;
      logger.debug({ seq: record.seq, kind: record.kind, status, completion }, 'model double: answered');
      notify();
    };
    const fail = async (status: ErrorStatus, message?: string, extra: Record<string, string> = {}): Promise<void> => {
      record.status = status;
      done(
        status,
        await writeJson(res, status, apiErrorBody(status, record.requestId, message), { ...headers, ...extra }),
      );
    };

    const raw = await readBody(req);
    if (raw === null) return fail(413);
    const isMessages = url.pathname === '/v1/messages';
    const isCount = url.pathname === '/v1/messages/count_tokens';
    if (req.method !== 'POST' || (!isMessages && !isCount)) {
      notify();
      return fail(404, `${req.method ?? 'GET'} ${url.pathname} is not served by the model double`);
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      notify();
      return fail(400, 'There was an error parsing the body of your request: it is not valid JSON');
    }
    record.body = body;
    if (!isRecord(body)) {
      notify();
      return fail(400, 'The request body must be a JSON object');
    }
    if (isCount) {
      record.kind = 'count_tokens';
      notify();
      return void done(200, await writeJson(res, 200, { input_tokens: estimateTokens(body.messages) }, headers));
    }
    if (!Array.isArray(body.messages)) {
      notify();
      return fail(400, 'messages: Field required');
    }
    const header = (name: string): string | undefined => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const info = describeMessagesRequest(body, {
      sessionId: header('x-claude-code-session-id'),
      agentId: header('x-claude-code-agent-id'),
    });
    Object.assign(record, {
      kind: info.kind,
      stream: info.stream,
      model: info.model,
      lastUserText: info.lastUserText,
      toolResults: info.toolResults,
      subagent: info.subagent,
      sessionId: info.sessionId,
      taskNotification: info.taskNotification,
    });

    let rule: Rule;
    if (info.kind === 'title') rule = { reply: [{ type: 'text', text: TITLE_REPLY }] };
    else if (info.kind === 'suggestion') rule = { reply: [{ type: 'text', text: SUGGESTION_REPLY }] };
    else if (script === null) rule = { reply: [{ type: 'text', text: OFFLINE_REPLY }] };
    else {
      const index = selectRule(script, used, info);
      if (index === null) {
        record.unmatched = true;
        rule = { reply: [{ type: 'text', text: unmatchedText(info) }] };
        logger.warn({ seq: record.seq, text: info.lastUserText }, 'model double: no rule matched');
      } else {
        used[index] = (used[index] ?? 0) + 1;
        rule = script[index] as Rule;
        record.rule = { index, name: rule.name ?? null };
      }
    }
    notify();

    if (rule.delayMs !== undefined && !(await waitUnlessGone(res, rule.delayMs))) {
      return void done(0, 'aborted');
    }
    if (rule.disconnect === true) {
      req.socket.destroy();
      return void done(0, 'disconnected');
    }
    const messageId = newId('msg_01');
    const inputTokens = estimateTokens(body.messages);
    if (rule.error !== undefined) {
      const error = rule.error;
      const extra: Record<string, string> = { ...(error.headers ?? {}) };
      if (error.status === 429)
        Object.assign(extra, rateLimitHeaders(error.retryAfterSeconds ?? 30, new Date()), error.headers);
      if (error.midStream === true && info.stream) {
        const start = planReply([], { messageId, model: info.model, inputTokens, newToolUseId: () => '' }).events[0];
        const entry = API_ERRORS[error.status];
        const events = midStreamErrorEvents(
          start!,
          { type: entry.type, message: error.message ?? entry.message },
          record.requestId,
        );
        return void done(200, await writeSse(res, events, { ...headers, ...extra }));
      }
      return fail(error.status, error.message, extra);
    }
    const plan = planReply(rule.reply as ReplyBlock[], {
      messageId,
      model: info.model,
      inputTokens,
      newToolUseId: () => newId('toolu_01'),
      stopReason: rule.stopReason,
      usage: rule.usage,
    });
    if (info.stream) done(200, await writeSse(res, plan.events, headers));
    else done(200, await writeJson(res, 200, plan.message, headers));
  }

  server.on('clientError', (err, socket) => {
    logger.debug({ err }, 'model double: client error');
    socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url }, 'model double listening');

  return {
    url,
    requests,
    setScript,
    waitForRequest(predicate, { timeoutMs = 10_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const hit = requests.find(predicate);
          if (hit === undefined) return false;
          watchers.delete(check);
          clearTimeout(timer);
          resolve(hit);
          return true;
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`model double: no matching request within ${timeoutMs} ms (${requests.length} recorded)`));
        }, timeoutMs);
        watchers.add(check);
        check();
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function unmatchedText(info: RequestInfo): string {
  const tools = info.toolResults.map((r) => `${r.toolName ?? '?'}${r.isError ? ' (error)' : ''}`).join(', ');
  const extras = [
    ...(tools === '' ? [] : [`tool results: ${tools}`]),
    ...(info.taskNotification === null ? [] : ['a task notification']),
    ...(info.subagent ? ['from a sub-agent'] : []),
  ];
  const suffix = extras.length === 0 ? '' : ` (${extras.join('; ')})`;
  return `[model double] no rule matched the text: ${JSON.stringify(info.lastUserText)}${suffix}`;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export function newId(prefix: string): string {
  const bytes = randomBytes(22);
  let out = prefix;
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooBig = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooBig ? null : Buffer.concat(chunks)));
    req.on('error', () => resolve(tooBig ? null : Buffer.concat(chunks)));
  });
}
