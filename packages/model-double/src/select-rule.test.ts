import { describe, expect, it } from 'vitest';
import type { RequestInfo } from './request-info.js';
import { parseScript } from './parse-script.js';
import { selectRule } from './select-rule.js';

const info = (over: Partial<RequestInfo>): RequestInfo => ({
  kind: 'main',
  stream: true,
  model: 'm',
  lastUserText: '',
  toolResults: [],
  subagent: false,
  sessionId: null,
  taskNotification: null,
  ...over,
});
const say = (text: string) => [{ type: 'text' as const, text }];

describe('selectRule', () => {
  const script = parseScript([
    { name: 'hello', match: { text: 'hello' }, reply: say('hi') },
    { name: 're', match: { text: { regex: '^run (\\w+)$', flags: 'i' } }, reply: say('ran') },
    { name: 'bash-ok', match: { toolResult: { name: 'Bash', isError: false } }, reply: say('ok') },
    { name: 'any-error', match: { toolResult: { isError: true } }, reply: say('err') },
    { name: 'any-result', match: { toolResult: true }, reply: say('res') },
    { name: 'sub', match: { subagent: true }, times: 'always', reply: say('sub') },
    { name: 'fallback', match: { subagent: false }, times: 2, reply: say('fb') },
  ]);

  it('matches substrings and regexes against the user text', () => {
    expect(selectRule(script, [], info({ lastUserText: 'well hello there' }))).toBe(0);
    expect(selectRule(script, [], info({ lastUserText: 'RUN tests' }))).toBe(1);
    expect(selectRule(script, [], info({ lastUserText: 'please run tests' }))).toBe(6);
  });

  it('matches tool results by tool name and error state', () => {
    const bash = { toolUseId: 't1', toolName: 'Bash', isError: false };
    expect(selectRule(script, [], info({ toolResults: [bash] }))).toBe(2);
    expect(selectRule(script, [], info({ toolResults: [{ ...bash, isError: true }] }))).toBe(3);
    expect(selectRule(script, [], info({ toolResults: [{ ...bash, toolName: 'Read' }] }))).toBe(4);
    expect(selectRule(script, [1, 0, 1], info({ toolResults: [bash] }))).toBe(4);
  });

  it('tells sub-agent requests apart', () => {
    expect(selectRule(script, [], info({ subagent: true, kind: 'subagent', lastUserText: 'zzz' }))).toBe(5);
    expect(selectRule(script, [0, 0, 0, 0, 0, 1000], info({ subagent: true }))).toBe(5);
  });

  it('skips used-up rules and returns null when nothing is left', () => {
    expect(selectRule(script, [1], info({ lastUserText: 'hello' }))).toBe(6);
    expect(selectRule(script, [1, 0, 0, 0, 0, 0, 1], info({ lastUserText: 'hello' }))).toBe(6);
    expect(selectRule(script, [1, 0, 0, 0, 0, 0, 2], info({ lastUserText: 'hello' }))).toBeNull();
  });

  it('matches the task-notification turn', () => {
    const s = parseScript([
      { match: { taskNotification: true }, reply: say('noted') },
      { match: { taskNotification: false }, reply: say('plain') },
    ]);
    const note = { taskId: 't', toolUseId: 'toolu_1', status: 'completed' };
    expect(selectRule(s, [], info({ taskNotification: note }))).toBe(0);
    expect(selectRule(s, [], info({}))).toBe(1);
    expect(selectRule(s, [1], info({ taskNotification: note }))).toBeNull();
  });

  it('matches a session id', () => {
    const s = parseScript([
      { match: { sessionId: 's-1' }, times: 'always', reply: say('one') },
      { reply: say('other') },
    ]);
    expect(selectRule(s, [], info({ sessionId: 's-1' }))).toBe(0);
    expect(selectRule(s, [], info({ sessionId: 's-2' }))).toBe(1);
    expect(selectRule(s, [], info({}))).toBe(1);
  });

  it('a rule without match answers anything, in order', () => {
    const s = parseScript([{ reply: say('a') }, { reply: say('b') }]);
    expect(selectRule(s, [], info({}))).toBe(0);
    expect(selectRule(s, [1], info({ subagent: true }))).toBe(1);
    expect(selectRule(s, [1, 1], info({}))).toBeNull();
  });
});
