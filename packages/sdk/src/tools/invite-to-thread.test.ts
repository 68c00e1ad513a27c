import { describe, expect, it } from 'vitest';
import { InviteToThreadInputSchema } from './invite-to-thread.js';

describe('invite_to_thread input', () => {
  it.each([
    [{ principalId: 'bob' }, true],
    [{ principalId: 'bob', threadId: 'th_x' }, true],
    [{ principalId: 'bob', role: 'owner' }, false],
    [{ principalId: 'bob', role: 'member' }, false],
    [{ principalId: 'Bob!' }, false],
    [{}, false],
  ])('%j → %s', (input, ok) => {
    expect(InviteToThreadInputSchema.safeParse(input).success).toBe(ok);
  });

  it('has no role field', () => {
    expect(Object.keys(InviteToThreadInputSchema.shape).sort()).toEqual(['principalId', 'threadId']);
  });
});
