import type { query as sdkQuery } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import { startLiveQuery } from './live-query.js';

const init = {
  type: 'system',
  subtype: 'init',
  session_id: 's-1',
  model: 'm',
  cwd: '/w',
  tools: [],
  permissionMode: 'default',
};
const delta = {
  type: 'stream_event',
  event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } },
  parent_tool_use_id: null,
  session_id: 's-1',
};
const drifted = { type: 'result', subtype: 'success', session_id: 's-1' };

/** The SDK's query() as a script: it yields these messages, then the CLI "exits". */
function scripted(messages: unknown[]): typeof sdkQuery {
  return (() => {
    const stream = (async function* () {
      for (const message of messages) yield message;
    })();
    return Object.assign(stream, { interrupt: async () => undefined, close: () => undefined });
  }) as unknown as typeof sdkQuery;
}

describe('startLiveQuery (scripted SDK)', () => {
  it('hands each message over narrowed once, in order', async () => {
    const live = startLiveQuery({ options: {}, query: scripted([init, delta, drifted]) });
    const kinds: string[] = [];
    for await (const message of live.narrowed) kinds.push(message.kind);
    expect(kinds).toEqual(['init', 'stream_event', 'unknown']);
    expect(live.sessionId).toBe('s-1');
    expect((await live.ended).reason).toBe('cli_exit');
  });

  it('gives recorders the messages exactly as yielded', async () => {
    const live = startLiveQuery({ options: {}, query: scripted([init, delta]) });
    const raw: unknown[] = [];
    for await (const message of live.messages) raw.push(message);
    expect(raw).toEqual([init, delta]);
    expect(raw[1]).toBe(delta);
  });

  it('has one reader, of either view', () => {
    const live = startLiveQuery({ options: {}, query: scripted([init]) });
    live.narrowed[Symbol.asyncIterator]();
    const reused = expect.objectContaining({ code: 'live_query_messages_reused' });
    expect(() => live.messages[Symbol.asyncIterator]()).toThrow(reused);
    expect(() => live.narrowed[Symbol.asyncIterator]()).toThrow(reused);
  });

  it('a reader that leaves early lets the query run to its end', async () => {
    const live = startLiveQuery({ options: {}, query: scripted([init, delta, delta]) });
    for await (const message of live.narrowed) {
      expect(message.kind).toBe('init');
      break;
    }
    expect((await live.ended).reason).toBe('cli_exit');
  });
});
