/**
 * Each error class end to end: the double (or a closed port) makes the real CLI
 * fail, and the LiveQuery classifies it. With RECORD_FIXTURES=1 the captured
 * inputs are written to src/__fixtures__/engine-errors.jsonl (the classifier's
 * table test) and each stream to src/__fixtures__/error-*.jsonl. The expected
 * kind comes from the scripted cause, never from the classifier.
 */
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Script } from '@bubble/model-double';
import { classifyEngineError, type ClassifyInput, type EngineErrorKind, type SdkMessageLike } from '../src/index.js';
import { FIXTURE_ROOT, FIXTURES_DIR, harnessFor, textOf, type HarnessOptions } from './harness.js';

interface ErrorFixture {
  name: string;
  cause: string;
  input: Omit<ClassifyInput, 'now'> & { now?: string };
  expected: { kind: EngineErrorKind; resetAt?: string };
}
const captured: ErrorFixture[] = [];

afterAll(async () => {
  if (process.env.RECORD_FIXTURES !== '1') return;
  // Only a full run rewrites the table: a filtered run must not drop the other captures.
  if (new Set(captured.map((f) => f.name.replace(/-text-only$/, ''))).size !== cases.length) return;
  captured.sort((a, b) => a.name.localeCompare(b.name));
  await writeFile(join(FIXTURES_DIR, 'engine-errors.jsonl'), `${captured.map((f) => JSON.stringify(f)).join('\n')}\n`);
});

/** The classifier input as a bot would build it from the stream: the result, the assistant error, the rate-limit event. */
function inputFrom(messages: SdkMessageLike[], root: string): Omit<ClassifyInput, 'now'> {
  const result = messages.filter((m) => m.type === 'result').at(-1);
  const failed = messages.filter((m) => m.type === 'assistant' && typeof m.error === 'string').at(-1);
  const rateLimit = messages.filter((m) => m.type === 'rate_limit_event').at(-1);
  const input: Omit<ClassifyInput, 'now'> = {};
  if (result)
    input.result = JSON.parse(JSON.stringify(result).split(root).join(FIXTURE_ROOT)) as ClassifyInput['result'];
  if (failed) {
    input.assistantError = failed.error as string;
    input.text = textOf(failed);
  }
  if (rateLimit) input.rateLimitInfo = rateLimit.rate_limit_info as ClassifyInput['rateLimitInfo'];
  return input;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Case {
  name: string;
  cause: string;
  script: Script;
  harness?: HarnessOptions | (() => Promise<HarnessOptions>);
  options?: Record<string, unknown>;
  expected: EngineErrorKind;
  /** Extra fixture entries from the same capture (e.g. text only, with the clock). */
  resetAt?: (now: Date) => { resetAt: string; textOnly: string };
  resultSubtype?: string;
}

const oauth = { credential: { kind: 'oauth' as const, token: 'sk-ant-oat01-double-test' } };
const toolThenText: Script = [
  {
    match: { text: 'go' },
    reply: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo step', description: 'step' } }],
  },
  {
    match: { toolResult: true },
    reply: [{ type: 'text', text: 'done' }],
    usage: { input_tokens: 200_000, output_tokens: 100_000 },
  },
];
// Reset times for the subscription limits, whole minutes so the CLI's clock text carries them exactly.
const inMinutes = (now: Date, minutes: number) => Math.floor(now.getTime() / 60_000) * 60 + minutes * 60;
let fiveHourReset = 0;
let weeklyReset = 0;

const cases: Case[] = [
  {
    name: 'auth-api-key-401',
    cause: 'the double answers 401 invalid x-api-key to an API key',
    script: [{ error: { status: 401 }, times: 'always' }],
    expected: 'auth',
  },
  {
    name: 'auth-oauth-expired-401',
    cause: 'the double answers 401 "OAuth token has expired" to an OAuth token',
    script: [
      {
        error: {
          status: 401,
          message: 'OAuth token has expired. Please obtain a new token or refresh your existing token.',
        },
        times: 'always',
      },
    ],
    harness: oauth,
    expected: 'auth',
  },
  {
    name: 'rate-limit-api-key-429',
    cause: 'the double answers 429 (retry-after 30) to an API key',
    script: [{ error: { status: 429, retryAfterSeconds: 30 }, times: 'always' }],
    expected: 'rate_limit',
  },
  {
    name: 'rate-limit-subscription-5h',
    cause: 'the double answers 429 with anthropic-ratelimit-unified-* headers (five_hour rejected) to an OAuth token',
    script: [],
    harness: oauth,
    expected: 'rate_limit',
  },
  {
    name: 'rate-limit-subscription-weekly',
    cause: 'the double answers 429 with anthropic-ratelimit-unified-* headers (seven_day rejected) to an OAuth token',
    script: [],
    harness: oauth,
    expected: 'rate_limit',
  },
  {
    name: 'overloaded-529',
    cause: 'the double answers 529 overloaded',
    script: [{ error: { status: 529 }, times: 'always' }],
    expected: 'overloaded',
  },
  {
    name: 'network-refused',
    cause: 'ANTHROPIC_BASE_URL points at a closed port',
    script: [],
    harness: async () => ({ baseUrl: `http://127.0.0.1:${await closedPort()}` }),
    expected: 'network',
  },
  {
    name: 'network-dropped',
    cause: 'the double drops the connection without answering',
    script: [{ disconnect: true, times: 'always' }],
    expected: 'network',
  },
  {
    name: 'max-turns',
    cause: 'maxTurns 1 and the model calls a tool',
    script: toolThenText,
    options: { maxTurns: 1 },
    expected: 'max_turns',
    resultSubtype: 'error_max_turns',
  },
  {
    name: 'budget',
    cause: 'maxBudgetUsd 0.0001 and the double reports large usage',
    script: toolThenText,
    options: { maxBudgetUsd: 0.0001 },
    expected: 'budget',
    resultSubtype: 'error_max_budget_usd',
  },
];

function unifiedHeaders(claim: 'five_hour' | 'seven_day', reset: number): Record<string, string> {
  const short = claim === 'five_hour' ? '5h' : '7d';
  return {
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-reset': String(reset),
    'anthropic-ratelimit-unified-representative-claim': claim,
    [`anthropic-ratelimit-unified-${short}-status`]: 'rejected',
    [`anthropic-ratelimit-unified-${short}-reset`]: String(reset),
  };
}

describe.concurrent('each error class end to end (real CLI against the model double)', () => {
  for (const c of cases) {
    it(`${c.name}: ${c.cause} -> ${c.expected}`, async (ctx) => {
      const now = new Date();
      let script = c.script;
      if (c.name === 'rate-limit-subscription-5h') {
        fiveHourReset = inMinutes(now, 2 * 60 + 7);
        script = [
          {
            error: { status: 429, retryAfterSeconds: 60, headers: unifiedHeaders('five_hour', fiveHourReset) },
            times: 'always',
          },
        ];
      } else if (c.name === 'rate-limit-subscription-weekly') {
        weeklyReset = inMinutes(now, 3 * 24 * 60 + 13);
        script = [
          {
            error: { status: 429, retryAfterSeconds: 60, headers: unifiedHeaders('seven_day', weeklyReset) },
            times: 'always',
          },
        ];
      }
      const harnessOptions = typeof c.harness === 'function' ? await c.harness() : (c.harness ?? {});
      const h = await harnessFor(ctx, script, harnessOptions);
      const s = h.start(c.options);
      s.live.push('go');
      const result = await s.result();
      expect(result.is_error).toBe(true);
      if (c.resultSubtype) expect(result.subtype).toBe(c.resultSubtype);

      const live = s.live.classify(result as never, now);
      expect(live.kind).toBe(c.expected);
      const input = inputFrom(s.messages, h.root);
      const expected: ErrorFixture['expected'] = { kind: c.expected };
      const reset =
        c.name === 'rate-limit-subscription-5h'
          ? fiveHourReset
          : c.name === 'rate-limit-subscription-weekly'
            ? weeklyReset
            : 0;
      if (reset) {
        expected.resetAt = new Date(reset * 1000).toISOString();
        expect(live.resetAt).toBe(expected.resetAt);
      }
      if (c.expected === 'auth') expect(live.message).toContain('claude setup-token');
      const classified = classifyEngineError(input);
      expect(classified.kind).toBe(c.expected);
      captured.push({ name: c.name, cause: c.cause, input, expected });
      if (reset) {
        // The same capture, text only: the reset time read from the CLI's clock text ("resets 10:04pm (UTC)").
        const textOnly: ClassifyInput = { text: input.text ?? '', now };
        const fromText = classifyEngineError(textOnly);
        expect(fromText).toMatchObject({ kind: 'rate_limit', resetAt: expected.resetAt });
        captured.push({
          name: `${c.name}-text-only`,
          cause: `${c.cause}; only the CLI's text and the clock are given`,
          input: { text: input.text ?? '', now: now.toISOString() },
          expected,
        });
      }

      // Ending after a failed turn: the CLI exits 1 and the iterator throws; that is an "error" end.
      s.live.end();
      const end = await s.live.ended;
      expect(end.reason).toBe('error');
      expect(end.classified?.kind).toBe(c.expected);
      await s.record(`error-${c.name}`);
    });
  }
});
