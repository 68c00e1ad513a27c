import { describe, expect, it } from 'vitest';
import { ThreadKeySchema } from '@bubble/protocol';
import { OpenSubthreadInputSchema, subthreadKey } from './open-subthread.js';

describe('subthreadKey', () => {
  const ids = { threadId: 'th_abc', runId: 'run-1', toolCallId: 'toolu_01' };

  it('is the same for the same call', () => {
    expect(subthreadKey(ids)).toBe(subthreadKey({ ...ids }));
  });

  it.each([
    ['another thread', { ...ids, threadId: 'th_abd' }],
    ['another run', { ...ids, runId: 'run-2' }],
    ['another tool call', { ...ids, toolCallId: 'toolu_02' }],
    ['ids that only concatenate alike', { threadId: 'th_a', runId: 'bc', toolCallId: 'toolu_01' }],
  ])('differs for %s', (_name, other) => {
    expect(subthreadKey(other)).not.toBe(subthreadKey(ids));
  });

  it('is a valid thread key', () => {
    expect(ThreadKeySchema.safeParse(subthreadKey(ids)).success).toBe(true);
    expect(
      ThreadKeySchema.safeParse(
        subthreadKey({ threadId: 'x'.repeat(500), runId: 'y'.repeat(200), toolCallId: 'z'.repeat(200) }),
      ).success,
    ).toBe(true);
  });

  it('takes no key from the model', () => {
    expect(OpenSubthreadInputSchema.safeParse({ title: 'side task', key: 'mine' }).success).toBe(false);
  });
});
