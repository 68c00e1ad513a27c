import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  cleanToolText,
  exitCode,
  helperReport,
  numberedLines,
  outputObject,
  outputText,
  toolErrorMeaning,
} from './tool-output-text';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE_DIRS = [
  join(here, '../../../sdk/src/fold/__fixtures__'),
  join(here, '../../../claude-scuba/src/translate/__fixtures__'),
  join(here, '../../../claude-scuba/src/translate/__fixtures__/engine'),
];

/** Every tool output and error text in the recorded streams. */
function recordedOutputs(): { toolName: string; text: string; isError: boolean }[] {
  const found: { toolName: string; text: string; isError: boolean }[] = [];
  const names = new Map<string, string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const chunk = node as Record<string, unknown>;
    if (typeof chunk.toolCallId === 'string' && typeof chunk.toolName === 'string')
      names.set(String(chunk.toolCallId), chunk.toolName);
    if (chunk.type === 'tool-output-available') {
      const text = outputText(chunk.output);
      if (text !== null) found.push({ toolName: names.get(String(chunk.toolCallId)) ?? '?', text, isError: false });
    }
    if (chunk.type === 'tool-output-error' && typeof chunk.errorText === 'string')
      found.push({ toolName: names.get(String(chunk.toolCallId)) ?? '?', text: chunk.errorText, isError: true });
    for (const value of Object.values(chunk)) visit(value);
  };
  const documents: unknown[] = [];
  for (const dir of FIXTURE_DIRS) {
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl') || f.endsWith('.expected.json'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      if (file.endsWith('.jsonl'))
        documents.push(
          ...text
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l) => JSON.parse(l)),
        );
      else documents.push(JSON.parse(text));
    }
  }
  // Twice: the first pass learns every call's tool name (a signal may name it after its output).
  for (const document of documents) visit(document);
  found.length = 0;
  for (const document of documents) visit(document);
  return found;
}

describe('tool outputs as a person reads them', () => {
  it('leaves none of the internal metadata of the recorded outputs on screen', () => {
    const outputs = recordedOutputs();
    expect(outputs.length).toBeGreaterThan(10);
    for (const { toolName, text, isError } of outputs) {
      const shown =
        toolName === 'Agent' || toolName === 'Task'
          ? helperReport(text).report
          : isError
            ? (() => {
                const meaning = toolErrorMeaning(text);
                return meaning.kind === 'failed' ? meaning.text : '';
              })()
            : cleanToolText(text);
      for (const internal of [
        'agentId',
        '<usage>',
        'internal metadata',
        'Subagent hand-back',
        'tools-used-before-summary',
        'system-reminder',
        "The user doesn't want to proceed",
        'Bash completed with no output',
      ]) {
        expect(shown, `${toolName}: ${text.slice(0, 80)}`).not.toContain(internal);
      }
    }
  });

  it("keeps a sub-agent's report, without the frame or its indent", () => {
    const text = [
      '  <tools-used-before-summary>Bash</tools-used-before-summary>',
      '  ',
      '[Subagent hand-back] The text below is the final report of a subagent. The report follows:',
      '  The command ran fine.',
      '  - and **this** too',
      'agentId: ab6dc17d909f67d96',
      '<usage>subagent_tokens: 3008',
      'tool_uses: 1',
      'duration_ms: 966</usage>',
    ].join('\n');
    expect(helperReport(text)).toEqual({ report: 'The command ran fine.\n- and **this** too', background: false });
    expect(helperReport('Async agent launched successfully. (This tool result is internal metadata …)')).toEqual({
      report: '',
      background: true,
    });
    expect(helperReport('Created probe.txt.')).toEqual({ report: 'Created probe.txt.', background: false });
  });

  it('drops system reminders and the stand-in for no output', () => {
    expect(cleanToolText('line 1\nline 2\n\n<system-reminder>\nconsider malware\n</system-reminder>\n')).toBe(
      'line 1\nline 2',
    );
    expect(cleanToolText('(Bash completed with no output)')).toBe('');
    expect(cleanToolText('  indented stays')).toBe('  indented stays');
  });

  it("reads a Read's numbered lines", () => {
    expect(numberedLines('     9→const a = 1;\n    10→\n    11→  return a;\n')).toEqual({
      first: 9,
      lines: ['const a = 1;', '', '  return a;'],
    });
    expect(numberedLines('     1\told style')).toEqual({ first: 1, lines: ['old style'] });
    expect(numberedLines('not numbered')).toBeNull();
  });

  it('tells a stop, a refusal and a failure apart', () => {
    expect(
      toolErrorMeaning(
        "The user doesn't want to proceed with this tool use. The tool use was rejected. Correction to the text above: this call was stopped while running, not refused before it ran.",
      ),
    ).toEqual({ kind: 'stopped' });
    expect(toolErrorMeaning("The user doesn't want to proceed with this tool use. The tool use was rejected.")).toEqual(
      {
        kind: 'refused',
      },
    );
    expect(toolErrorMeaning('Denied by alice: not in this repo')).toEqual({
      kind: 'refused',
      by: 'alice',
      reason: 'not in this repo',
    });
    expect(toolErrorMeaning('Denied by alice.')).toEqual({ kind: 'refused', by: 'alice' });
    expect(toolErrorMeaning('Exit code 1\nnpm ERR! missing script')).toEqual({
      kind: 'failed',
      text: 'Exit code 1\nnpm ERR! missing script',
    });
    expect(exitCode('Exit code 127\nsh: nope: not found')).toBe(127);
    expect(exitCode('no code')).toBeUndefined();
  });

  it('reads text and JSON outputs', () => {
    expect(
      outputText([
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ]),
    ).toBe('a\nb');
    expect(outputText({ a: 1 })).toBeNull();
    expect(outputObject([{ type: 'text', text: '{"name":"plan.md","version":2}' }])).toEqual({
      name: 'plan.md',
      version: 2,
    });
    expect(outputObject('not json')).toBeNull();
    expect(outputObject({ ok: true })).toEqual({ ok: true });
  });
});
