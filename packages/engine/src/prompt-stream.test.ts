import { describe, expect, it } from 'vitest';
import { PromptStream, userMessage } from './prompt-stream.js';
import { EngineError } from './engine-error.js';

describe('userMessage', () => {
  it('builds a streaming-input user message with a client uuid and the optional flags', () => {
    expect(userMessage('hi', { uuid: 'u-1', shouldQuery: false, priority: 'next' })).toEqual({
      type: 'user',
      message: { role: 'user', content: 'hi' },
      parent_tool_use_id: null,
      uuid: 'u-1',
      shouldQuery: false,
      priority: 'next',
    });
    const generated = userMessage([{ type: 'text', text: 'blocks' }]);
    expect(generated.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated).not.toHaveProperty('shouldQuery');
  });
});

describe('PromptStream', () => {
  it('delivers pushed messages in order, and a pull waits for the next push', async () => {
    const stream = new PromptStream();
    stream.push(userMessage('one', { uuid: 'a' }));
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value?.uuid).toBe('a');
    const pending = it.next();
    let settled = false;
    void pending.then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    stream.push(userMessage('two', { uuid: 'b' }));
    expect((await pending).value?.uuid).toBe('b');
  });

  it('delivers what was pushed before end(), then finishes; a waiting pull finishes on end()', async () => {
    const stream = new PromptStream();
    stream.push(userMessage('last', { uuid: 'z' }));
    stream.end();
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value?.uuid).toBe('z');
    expect(await it.next()).toEqual({ value: undefined, done: true });

    const other = new PromptStream();
    const waiting = other[Symbol.asyncIterator]().next();
    other.end();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  it('rejects a push after end() with a clear error', () => {
    const stream = new PromptStream();
    stream.end();
    expect(() => stream.push(userMessage('late'))).toThrow(EngineError);
    expect(() => stream.push(userMessage('late'))).toThrow(/prompt stream has ended/);
  });

  it('ends when its reader stops, so later pushes fail instead of vanishing', async () => {
    const stream = new PromptStream();
    stream.push(userMessage('first', { uuid: 'only' }));
    stream.push(userMessage('dropped', { uuid: 'never-read' }));
    for await (const message of stream) {
      expect(message.uuid).toBe('only');
      break;
    }
    expect(stream.ended).toBe(true);
    expect(() => stream.push(userMessage('lost?'))).toThrow(/ended/);
  });

  it('has one reader only', () => {
    const stream = new PromptStream();
    stream[Symbol.asyncIterator]();
    expect(() => stream[Symbol.asyncIterator]()).toThrow(/only once/);
  });
});
