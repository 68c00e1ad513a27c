import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { CORE_TOOLS, toolCatalog } from './tool-catalog.js';
import { ARTIFACT_TOOLS } from './artifact-tools.js';
import { defineTool } from './local-tool.js';
import { threadFieldNames, threadIdInput, threadInScope, threadOutOfScope } from './thread-scope.js';

describe('threadInScope', () => {
  it.each([
    ['th_a', 'th_a', true],
    ['th_a', 'th_a.sub-a8f3k-2q9', true],
    ['th_a', 'th_a.sub-a8f3k-2q9.sub-b1c2d-3e4', true],
    ['th_a.sub-a8f3k-2q9', 'th_a.sub-a8f3k-2q9.sub-b1c2d-3e4', true],
    ['th_a', 'th_b', false],
    ['th_a', 'th_ab', false],
    ['th_a', 'th_a.sub', false],
    ['th_a', 'th_a.subx-a8f3k-2q9', false],
    ['th_a', 'th_b.sub-a8f3k-2q9', false],
    ['th_a', 'x.th_a.sub-a8f3k-2q9', false],
    ['th_a.sub-a8f3k-2q9', 'th_a', false],
    ['th_a.sub-a8f3k-2q9', 'th_a.sub-zzzzz-zzz', false],
    ['th_a', '', false],
  ])('run on %s, thread %s → %s', (run, thread, inScope) => {
    expect(threadInScope(run, thread)).toBe(inScope);
  });
});

describe('threadOutOfScope', () => {
  const schema = z.strictObject({
    threadId: threadIdInput('t'),
    parentThreadId: threadIdInput('p'),
    other: z.string(),
  });
  const context = { runThreadId: 'th_a', threadId: 'th_a' };

  it.each([
    [{}, context, undefined],
    [{ threadId: 'th_a.sub-a8f3k-2q9' }, context, undefined],
    [{ threadId: 'th_b' }, context, 'th_b'],
    [{ parentThreadId: 'th_b.sub-a8f3k-2q9' }, context, 'th_b.sub-a8f3k-2q9'],
    [{ threadId: 'th_a', parentThreadId: 'th_c' }, context, 'th_c'],
    // A field not declared as a thread is not a thread.
    [{ other: 'th_b' }, context, undefined],
    // A sub-agent's calls come from its subthread: in scope, and its default is too.
    [{ threadId: 'th_a' }, { runThreadId: 'th_a', threadId: 'th_a.sub-a8f3k-2q9' }, undefined],
    // A calling thread outside the run's is refused even when the input names none.
    [{}, { runThreadId: 'th_a', threadId: 'th_b' }, 'th_b'],
  ])('%j from %j → %s', (input, where, outside) => {
    expect(threadOutOfScope(schema, input, where)).toBe(outside);
  });

  it("finds every catalog tool's thread fields", () => {
    const fields = Object.fromEntries(
      [...CORE_TOOLS, ...ARTIFACT_TOOLS].map((tool) => [tool.name, threadFieldNames(tool.inputSchema)]),
    );
    expect(fields).toEqual({
      browse_thread: ['threadId'],
      open_subthread: ['parentThreadId'],
      search_principals: [],
      invite_to_thread: ['threadId'],
      list_artifacts: ['threadId'],
      read_artifact: ['threadId'],
      write_artifact: ['threadId'],
    });
  });
});

describe('toolCatalog', () => {
  it.each([['threadId'], ['parentThreadId'], ['targetThreadIds']])(
    'refuses a tool whose %s is not declared with threadIdInput',
    (field) => {
      const tool = defineTool({
        name: 'sneaky',
        description: 'x',
        inputSchema: z.strictObject({ [field]: z.string().optional() }),
        handler: async () => null,
      });
      expect(() => toolCatalog([tool], { artifacts: false })).toThrow(
        `sneaky's ${field} names a thread: declare it with threadIdInput`,
      );
    },
  );
});
