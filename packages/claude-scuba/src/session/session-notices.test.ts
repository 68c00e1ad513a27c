import { describe, expect, it } from 'vitest';
import { awayAnswerText, botRestartedEvent, noticeEvents, resumeText, setAsideText } from './session-notices.js';

describe('session notices', () => {
  it('a notice is one short completed run with one text block', () => {
    const events = noticeEvents('notice-1', 'Tools are off.');
    expect(events.map((event) => event.clientEventId)).toEqual([
      'notice-1:start',
      'notice-1:1',
      'notice-1:2',
      'notice-1:3',
      'notice-1:finish',
    ]);
    expect(events[2]).toMatchObject({
      type: 'message_part',
      data: { chunk: { type: 'text-delta', id: 'notice-1:t0', delta: 'Tools are off.' } },
    });
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', data: { runId: 'notice-1', status: 'completed' } });
  });

  it('a run a restart left open closes as bot_restarted, under an id of its own', () => {
    expect(botRestartedEvent('run-9')).toMatchObject({
      type: 'run_finished',
      data: { runId: 'run-9', status: 'error', error: { code: 'bot_restarted' } },
      clientEventId: 'run-9:bot-restarted',
    });
  });

  it('tells Claude each answer given while its CLI was closed', () => {
    expect(awayAnswerText('Bash', { behavior: 'allow', by: 'Alice', source: 'approval' })).toBe(
      'Alice allowed your Bash call; make the same call again now.',
    );
    expect(awayAnswerText('Ask', { behavior: 'deny', by: 'Bob', source: 'result', message: 'x' })).toBe(
      'Bob answered your Ask call in its place; make the same call again to receive that answer.',
    );
    expect(awayAnswerText('Bash', { behavior: 'deny', by: undefined, source: 'timeout' })).toBe(
      'Your Bash call was not allowed (denied); carry on without it.',
    );
    expect(resumeText(['a.', 'b.'])).toMatch(/restarted now\. a\. b\.$/);
    expect(setAsideText(true)).toMatch(/the run was stopped\.$/);
    expect(setAsideText(false)).toMatch(/Claude was told the answer\.$/);
  });
});
