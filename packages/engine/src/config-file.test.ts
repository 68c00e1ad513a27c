import { describe, expect, it } from 'vitest';
import { configPathFromArgv, configResolver, describeConfigProblems, readConfigJson } from './config-file.js';

describe('config files', () => {
  it('finds --config in both spellings', () => {
    expect(configPathFromArgv(['--config', 'a.json'])).toBe('a.json');
    expect(configPathFromArgv(['-v', '--config=b.json'])).toBe('b.json');
    expect(configPathFromArgv(['--help'])).toBeUndefined();
  });

  it('reads JSON, or says why it could not', () => {
    const files: Record<string, string> = { '/c/good.json': '{"a":1}', '/c/bad.json': '{a' };
    const readFile = (p: string) => {
      if (p === '/c/dir') throw Object.assign(new Error('dir'), { code: 'EISDIR' });
      if (!(p in files)) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return files[p]!;
    };
    expect(readConfigJson('/c/good.json', readFile)).toEqual({ ok: true, path: '/c/good.json', json: { a: 1 } });
    expect(readConfigJson('/c/none.json', readFile)).toMatchObject({
      ok: false,
      problem: 'the config file /c/none.json does not exist',
    });
    expect(readConfigJson('/c/dir', readFile)).toMatchObject({
      ok: false,
      problem: 'the config file /c/dir is a directory',
    });
    expect(readConfigJson('/c/bad.json', readFile)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('is not valid JSON'),
    });
  });

  it('says every problem at once', () => {
    expect(describeConfigProblems('/c/x.json', ['a is missing'])).toBe(
      'the config file /c/x.json has 1 problem:\n  - a is missing',
    );
    expect(describeConfigProblems('/c/x.json', ['a', 'b'])).toBe(
      'the config file /c/x.json has 2 problems:\n  - a\n  - b',
    );
  });

  it('resolves secrets and paths against the config folder, collecting problems', () => {
    const r = configResolver({ env: { TOKEN: 't0k' }, baseDir: '/srv/bot', readFile: () => 'from-file\n' });
    expect(r.abs('./data')).toBe('/srv/bot/data');
    expect(r.abs('/abs')).toBe('/abs');
    expect(r.secret({ env: 'TOKEN' }, 'a.token')?.reveal()).toBe('t0k');
    expect(r.secret({ file: 'key' }, 'b.key')?.source).toBe('file:/srv/bot/key');
    expect(r.secret({ env: 'NOPE' }, 'c.token')).toBeUndefined();
    expect(r.problems).toEqual(['c.token: the environment variable NOPE is not set']);
  });
});
