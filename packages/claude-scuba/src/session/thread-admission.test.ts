import type { JoinableBy, Role } from '@bubble/protocol';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ThreadAdmission } from './thread-admission.js';

/** Threads by id: parent and participants. */
const threads: Record<string, { parent: string | null; people: string[] }> = {
  th_a: { parent: null, people: ['alice', 'bot'] },
  'th_a.sub-aaaaa-111': { parent: 'th_a', people: ['bot'] },
  'th_a.sub-aaaaa-111.sub-bbbbb-222': { parent: 'th_a.sub-aaaaa-111', people: ['bot'] },
  th_m: { parent: null, people: ['mallory', 'bot'] },
  'th_m.sub-ccccc-333': { parent: 'th_m', people: ['bot'] },
};
const client = {
  getThread: async (threadId: string) => {
    const thread = threads[threadId];
    if (!thread) throw new Error(`no thread ${threadId}`);
    return { threadId, parentThreadId: thread.parent };
  },
  listParticipants: async (threadId: string) =>
    (threads[threadId]?.people ?? []).map((principalId) => ({ principalId })),
};

async function admitted(
  threadId: string,
  joinableBy: JoinableBy = 'owners',
  roles?: Map<string, Role>,
): Promise<boolean> {
  const live = roles ?? new Map((threads[threadId]?.people ?? []).map((p) => [p, 'member' as Role]));
  const admission = new ThreadAdmission({
    threadId,
    botOwners: new Set(['alice']),
    joinableBy: () => joinableBy,
    roles: live,
    client,
    logger: pino({ level: 'silent' }),
  });
  await admission.init();
  return admission.admitted;
}

describe('ThreadAdmission', () => {
  it.each<[string, JoinableBy, boolean]>([
    ['th_a', 'owners', true],
    ['th_a.sub-aaaaa-111', 'owners', true],
    ['th_a.sub-aaaaa-111.sub-bbbbb-222', 'owners', true],
    ['th_m', 'owners', false],
    ['th_m.sub-ccccc-333', 'owners', false],
    ['th_m', 'anyone', true],
    ['th_unknown.sub-ddddd-444', 'owners', false],
  ])('%s with joinableBy %s -> %s', async (threadId, joinableBy, expected) => {
    expect(await admitted(threadId, joinableBy)).toBe(expected);
  });

  it('follows the live roles: an owner who joins later admits the thread', async () => {
    const roles = new Map<string, Role>([
      ['mallory', 'owner'],
      ['bot', 'member'],
    ]);
    const admission = new ThreadAdmission({
      threadId: 'th_m',
      botOwners: new Set(['alice']),
      joinableBy: () => 'owners',
      roles,
      client,
      logger: pino({ level: 'silent' }),
    });
    await admission.init();
    expect(admission.admitted).toBe(false);
    roles.set('alice', 'member');
    expect(admission.admitted).toBe(true);
  });
});
