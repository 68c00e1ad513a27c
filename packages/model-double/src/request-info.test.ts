import { describe, expect, it } from 'vitest';
import { describeMessagesRequest, stripReminders } from './request-info.js';

const reminder = (s: string): string => `<system-reminder>\n${s}\n</system-reminder>`;

describe('describeMessagesRequest', () => {
  it('takes the last non-reminder text block of the last user message', () => {
    const info = describeMessagesRequest({
      model: 'claude-opus-5-5',
      stream: true,
      tools: [{ name: 'Bash' }],
      messages: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: [{ type: 'text', text: 'earlier answer' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: reminder('environment') },
            { type: 'text', text: 'what is the weather?' },
            { type: 'text', text: reminder('date: today') },
          ],
        },
      ],
    });
    expect(info).toEqual({
      kind: 'main',
      stream: true,
      model: 'claude-opus-5-5',
      lastUserText: 'what is the weather?',
      toolResults: [],
      subagent: false,
      sessionId: null,
      taskNotification: null,
    });
  });

  it('takes the session id from the header, else from metadata.user_id', () => {
    const body = {
      metadata: { user_id: JSON.stringify({ device_id: 'd', session_id: 'from-metadata' }) },
      messages: [{ role: 'user', content: 'x' }],
    };
    expect(describeMessagesRequest(body, { sessionId: 'from-header' }).sessionId).toBe('from-header');
    expect(describeMessagesRequest(body).sessionId).toBe('from-metadata');
    expect(describeMessagesRequest({ metadata: { user_id: 'not json' }, messages: [] }).sessionId).toBeNull();
  });

  it('strips reminders embedded inside a text block and in string content', () => {
    expect(stripReminders(`${reminder('a')}hello ${reminder('b')}world`)).toBe('hello world');
    const info = describeMessagesRequest({ messages: [{ role: 'user', content: `${reminder('x')}\nping` }] });
    expect(info.lastUserText).toBe('ping');
    expect(info.stream).toBe(false);
    expect(info.model).toBe('claude-model-double');
  });

  it('resolves tool results to the tool name of the matching tool_use', () => {
    const info = describeMessagesRequest({
      messages: [
        { role: 'user', content: 'run it' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
            { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: '/x' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: `a.txt${reminder('note')}` },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'nope', is_error: true },
            { type: 'tool_result', tool_use_id: 'toolu_unknown', content: '?' },
          ],
        },
      ],
    });
    expect(info.lastUserText).toBe('');
    expect(info.toolResults).toEqual([
      { toolUseId: 'toolu_1', toolName: 'Bash', isError: false },
      { toolUseId: 'toolu_2', toolName: 'Read', isError: true },
      { toolUseId: 'toolu_unknown', toolName: null, isError: false },
    ]);
  });

  it('marks sub-agent requests by their system block', () => {
    const info = describeMessagesRequest({
      system: [
        { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332;' },
        { type: 'text', text: "You are an agent for Claude Code, Anthropic's official CLI for Claude." },
      ],
      tools: [{ name: 'Bash' }],
      messages: [{ role: 'user', content: 'list the files' }],
    });
    expect(info.kind).toBe('subagent');
    expect(info.subagent).toBe(true);
  });

  it("marks a custom agent's requests by the attribution line or the agent id header, and the main loop's not", () => {
    const sdkOpening = { type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." };
    const request = (attribution: string) => ({
      system: [
        {
          type: 'text',
          text: `x-anthropic-billing-header: cc_version=2.1.332.93d; cc_entrypoint=sdk-ts;${attribution}`,
        },
        sdkOpening,
      ],
      messages: [{ role: 'user', content: 'echo the word' }],
    });
    expect(describeMessagesRequest(request(' cc_is_subagent=true;')).kind).toBe('subagent');
    expect(describeMessagesRequest(request(''), { agentId: 'a5ea2bc1d2bf67520' }).kind).toBe('subagent');
    expect(describeMessagesRequest(request('')).kind).toBe('main');
    expect(describeMessagesRequest(request(' cc_is_subagent=false;'), { agentId: '' }).kind).toBe('main');
  });

  it('recognises title requests and suggestion requests', () => {
    const title = describeMessagesRequest({
      output_config: {
        format: { type: 'json_schema', schema: { type: 'object', properties: { title: { type: 'string' } } } },
      },
      messages: [{ role: 'user', content: '<session>hi</session>' }],
    });
    expect(title.kind).toBe('title');
    const withTools = describeMessagesRequest({
      tools: [{ name: 'Bash' }],
      output_config: { format: { type: 'json_schema', schema: { properties: { title: {} } } } },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(withTools.kind).toBe('main');
    const suggestion = describeMessagesRequest({
      messages: [{ role: 'user', content: [{ type: 'text', text: '[SUGGESTION MODE: guess what the user types]' }] }],
    });
    expect(suggestion.kind).toBe('suggestion');
  });

  it('reads the task notification of the turn the CLI starts after a background agent', () => {
    const text = reminder(
      '[SYSTEM NOTIFICATION - NOT USER INPUT]\n<task-notification>\n<task-id>a73b</task-id>\n' +
        '<tool-use-id>toolu_01M</tool-use-id>\n<status>completed</status>\n<result>done</result>\n</task-notification>',
    );
    const info = describeMessagesRequest({ messages: [{ role: 'user', content: [{ type: 'text', text }] }] });
    expect(info.lastUserText).toBe('');
    expect(info.taskNotification).toEqual({ taskId: 'a73b', toolUseId: 'toolu_01M', status: 'completed' });
    const plain = describeMessagesRequest({ messages: [{ role: 'user', content: 'no <task-id>x</task-id> here' }] });
    expect(plain.taskNotification).toBeNull();
  });

  it('reads malformed bodies leniently', () => {
    const info = describeMessagesRequest({ messages: [null, 3, { role: 'user', content: 42 }], system: 7, model: 5 });
    expect(info).toMatchObject({ kind: 'main', lastUserText: '', toolResults: [], subagent: false });
  });
});
