import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isScubaError } from '../errors.js';
import { loadConfigFile } from './load-config.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'scuba-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const env = { ANTHROPIC_API_KEY: 'sk-test', BOT_TOKEN: 'bubble_agent_x' };

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function failure(fn: () => unknown): { code: string; message: string; problems: readonly string[] } {
  try {
    fn();
  } catch (error) {
    if (isScubaError(error)) return { code: error.code, message: error.message, problems: error.problems };
    throw error;
  }
  throw new Error('expected a ScubaError');
}

describe('loadConfigFile', () => {
  it('loads a file, resolving paths and token files next to it', () => {
    write('token', 'bubble_agent_fromfile\n');
    const path = write(
      'scuba.json',
      JSON.stringify({
        bubble: { url: 'http://127.0.0.1:1', principalId: 'bot-a', token: { file: 'token' } },
        store: { path: 'state/db.sqlite' },
      }),
    );
    const loaded = loadConfigFile(path, { env });
    expect(loaded.path).toBe(path);
    expect(loaded.config.bubble.token.reveal()).toBe('bubble_agent_fromfile');
    expect(loaded.config.store.path).toBe(join(dir, 'state/db.sqlite'));
    expect(loaded.config.claude.workspaceRoot).toBe(join(dir, '.scuba/workspaces'));
  });

  it('says when the file does not exist', () => {
    const path = join(dir, 'nope.json');
    expect(failure(() => loadConfigFile(path, { env }))).toEqual({
      code: 'config_unreadable',
      message: `the config file ${path} does not exist`,
      problems: [`the config file ${path} does not exist`],
    });
  });

  it('says when the path is a directory', () => {
    mkdirSync(join(dir, 'd'));
    expect(failure(() => loadConfigFile(join(dir, 'd'), { env })).message).toBe(
      `the config file ${join(dir, 'd')} is a directory`,
    );
  });

  it('says when the file is not JSON', () => {
    const path = write('bad.json', '{ "bubble": ');
    const error = failure(() => loadConfigFile(path, { env }));
    expect(error.code).toBe('config_unreadable');
    expect(error.message).toMatch(new RegExp(`^the config file ${path} is not valid JSON: `));
  });

  it('lists every problem in the message', () => {
    const path = write(
      'scuba.json',
      JSON.stringify({ bubble: { url: 'nope', principalId: 'bot-a' }, turns: { steer: 1 } }),
    );
    expect(failure(() => loadConfigFile(path, { env }))).toEqual({
      code: 'config_invalid',
      message: [
        `the config file ${path} has 3 problems:`,
        '  - bubble.url must be an http(s) URL such as "http://127.0.0.1:7777" (got "nope")',
        '  - bubble.token is missing',
        '  - turns.steer must be true or false (got 1)',
      ].join('\n'),
      problems: [
        'bubble.url must be an http(s) URL such as "http://127.0.0.1:7777" (got "nope")',
        'bubble.token is missing',
        'turns.steer must be true or false (got 1)',
      ],
    });
  });
});
