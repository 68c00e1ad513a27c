import { describe, expect, it } from 'vitest';
import { describeTool, shortCommand, shortPath, type ToolDisplay, type ToolState, toolStateOf } from './tool-display';

/** The title as one line of text, the way the summary reads it (code in backticks). */
const line = (d: ToolDisplay) =>
  [d.verb, d.subject === undefined ? '' : d.subjectIsCode ? `\`${d.subject}\`` : d.subject, d.detail ?? '']
    .filter((s) => s !== '')
    .join(' ');
const title = (toolName: string, input: unknown, state: ToolState = 'done', output?: unknown) =>
  line(describeTool(toolName, input, state, output));

describe('describeTool', () => {
  it("says what Claude Code's tools did, in each state", () => {
    expect(title('Bash', { command: 'npm test', description: 'Run tests' })).toBe('Ran `npm test`');
    expect(title('Bash', { command: 'rm -rf build' }, 'waiting')).toBe('Asks to run `rm -rf build`');
    expect(title('Bash', { command: 'rm -rf build' }, 'denied')).toBe('Did not run `rm -rf build`');
    expect(title('Bash', { command: 'sleep 9' }, 'running')).toBe('Running `sleep 9`');
    expect(title('Read', { file_path: '/srv/data/launcher/workspaces/th_1/src/app.ts' })).toBe('Read `src/app.ts`');
    expect(title('Read', { file_path: 'src/app.ts', offset: 10, limit: 20 })).toBe('Read `src/app.ts` lines 10–29');
    expect(title('Edit', { file_path: 'src/app.ts', old_string: 'a\nb\nc', new_string: 'a\nB\nc\nd' })).toBe(
      'Edited `src/app.ts` (+2 −1)',
    );
    expect(title('Write', { file_path: 'notes.txt', content: 'one\ntwo\n' }, 'waiting')).toBe(
      'Asks to write `notes.txt` (+2 −0)',
    );
    expect(title('Grep', { pattern: 'TODO', path: 'src' }, 'done', 'Found 3 files\na\nb\nc')).toBe(
      'Searched for `TODO` in src (3 files)',
    );
    expect(title('Glob', { pattern: '**/*.css' }, 'done', 'a.css\nb.css')).toBe(
      'Found files matching `**/*.css` (2 files)',
    );
    expect(title('Glob', { pattern: '*.md' }, 'done', 'No files found')).toBe(
      'Found files matching `*.md` (none found)',
    );
    expect(title('WebFetch', { url: 'https://example.com/docs/page?x=1', prompt: 'summarise' })).toBe(
      'Fetched `example.com/docs/page`',
    );
    expect(title('WebSearch', { query: 'wcag contrast' })).toBe('Searched the web for “wcag contrast”');
    expect(title('Agent', { description: 'Review the diff', prompt: '…' })).toBe('Asked a helper: Review the diff');
    expect(title('Task', { prompt: 'Check the build' }, 'waiting')).toBe('Asks a helper: Check the build');
    expect(
      title('TodoWrite', {
        todos: [
          { content: 'a', status: 'completed' },
          { content: 'b', status: 'in_progress' },
        ],
      }),
    ).toBe('Updated the plan (1 of 2 done)');
  });

  it("names the bot's bubble tools", () => {
    const wrote = [{ type: 'text', text: '{"name":"plan.md","version":2,"mediaType":"text/markdown"}' }];
    expect(title('mcp__bubble__write_artifact', { name: 'plan.md', content: '# Plan' }, 'done', wrote)).toBe(
      'Wrote artifact `plan.md` (version 2)',
    );
    expect(title('mcp__bubble__write_artifact', { name: 'plan.md', content: '# Plan' }, 'waiting')).toBe(
      'Asks to write artifact `plan.md`',
    );
    expect(title('mcp__bubble__browse_thread', {}, 'done', '{"fromSeq":3,"toSeq":52,"transcript":""}')).toBe(
      'Read the thread (#3–#52)',
    );
    expect(title('mcp__bubble__open_subthread', { title: 'Side quest' })).toBe('Opened a subthread “Side quest”');
    expect(title('mcp__bubble__invite_to_thread', { principalId: 'bob' }, 'done', '{"invited":true}')).toBe(
      'Invited `bob` to the thread',
    );
    expect(title('mcp__bubble__invite_to_thread', { principalId: 'bob' }, 'done', '{"invited":false}')).toBe(
      'Invited `bob` (already on the thread)',
    );
    expect(
      title('mcp__bubble__invite_to_thread', { principalId: 'bob' }, 'done', '{"status":"pending","invited":true}'),
    ).toBe('Invited `bob` to the thread (pending: they must accept)');
    expect(
      title('mcp__bubble__invite_to_thread', { principalId: 'bob', threadId: 'th_b.sub-aaaaa-bbb' }, 'waiting'),
    ).toBe('Asks to invite `bob` to thread th_b.sub-aaaaa-bbb');
    expect(
      title('mcp__bubble__search_principals', { query: 'bo' }, 'done', '{"principals":[{"principalId":"bob"}]}'),
    ).toBe('Looked up “bo” (1 match)');
    expect(title('mcp__github__create_issue', { title: 'x' })).toBe('Used `create_issue` from github');
    expect(title('SomethingNew', { a: 1 })).toBe('Used `SomethingNew`');
  });

  it('shortens long commands and paths, keeping the whole in a title', () => {
    expect(shortCommand('npm run build && npm test\nsecond line')).toBe('npm run build && npm test …');
    expect(shortCommand('x'.repeat(100))).toHaveLength(72);
    expect(shortPath('/home/me/projects/app/src/ui/app.tsx')).toBe('…/src/ui/app.tsx');
    expect(shortPath('src/app.ts')).toBe('src/app.ts');
    expect(describeTool('Bash', { command: 'a\nb' }, 'done')).toMatchObject({ subject: 'a …', subjectTitle: 'a\nb' });
  });
});

describe('toolStateOf', () => {
  const base = { partState: 'input-available', waiting: false, runStatus: 'streaming' as const };
  it('reads each state', () => {
    expect(toolStateOf({ ...base, waiting: true })).toBe('waiting');
    expect(toolStateOf(base)).toBe('running');
    expect(toolStateOf({ ...base, partState: 'output-available' })).toBe('done');
    expect(toolStateOf({ ...base, partState: 'output-error', errorKind: 'failed' })).toBe('failed');
    expect(toolStateOf({ ...base, partState: 'output-error', errorKind: 'stopped' })).toBe('stopped');
    expect(toolStateOf({ ...base, partState: 'output-denied' })).toBe('denied');
    expect(toolStateOf({ ...base, runStatus: 'interrupted' })).toBe('stopped');
    expect(toolStateOf({ ...base, runStatus: 'completed' })).toBe('no-result');
  });

  it('calls a denied call denied, never failed, whatever error the bot reports for it', () => {
    expect(toolStateOf({ ...base, partState: 'output-error', errorKind: 'failed', decision: 'deny' })).toBe('denied');
    expect(toolStateOf({ ...base, partState: 'output-error', errorKind: 'refused' })).toBe('denied');
  });
});
