import { describe, expect, it } from 'vitest';
import { modelModeOf, parseLaunchCli, parseLaunchEnv } from './launch-options.js';

describe('parseLaunchCli', () => {
  it('has defaults and takes --port, --data, --host', () => {
    expect(parseLaunchCli([])).toEqual({ ok: true, value: { port: 7777, host: '127.0.0.1', data: './data' } });
    expect(parseLaunchCli(['--port', '0', '--data', '/tmp/x'])).toEqual({
      ok: true,
      value: { port: 0, host: '127.0.0.1', data: '/tmp/x' },
    });
    expect(parseLaunchCli(['--help'])).toEqual({ ok: true, help: true });
  });
  it.each([
    [['--port', 'x'], '--port must be a number'],
    [['--port', '99999'], '--port must be between 0 and 65535'],
    [['--bogus'], "Unknown option '--bogus'"],
  ])('%j is refused', (argv, message) => {
    const r = parseLaunchCli(argv);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.join(' ')).toContain(message);
  });
});

describe('modelModeOf', () => {
  it.each([
    [{}, 'double'],
    [{ ANTHROPIC_API_KEY: '' }, 'double'],
    [{ ANTHROPIC_API_KEY: 'sk-x' }, 'claude'],
    [{ CLAUDE_CODE_OAUTH_TOKEN: 'oat' }, 'claude'],
  ])('%j → %s', (env, mode) => expect(modelModeOf(env)).toBe(mode));
});

describe('parseLaunchEnv', () => {
  it('logs pretty at a terminal and JSON elsewhere, at warn, unless told otherwise', () => {
    expect(parseLaunchEnv({}, true)).toEqual({
      ok: true,
      value: { mode: 'double', logLevel: 'warn', logFormat: 'pretty' },
    });
    expect(parseLaunchEnv({}, false)).toEqual({
      ok: true,
      value: { mode: 'double', logLevel: 'warn', logFormat: 'json' },
    });
    expect(
      parseLaunchEnv({ BUBBLE_LOG_FORMAT: 'json', BUBBLE_LOG_LEVEL: 'debug', ANTHROPIC_API_KEY: 'sk' }, true),
    ).toEqual({ ok: true, value: { mode: 'claude', logLevel: 'debug', logFormat: 'json' } });
  });
  it('lists every problem', () => {
    expect(parseLaunchEnv({ BUBBLE_LOG_FORMAT: 'xml', BUBBLE_LOG_LEVEL: 'loud' }, true)).toEqual({
      ok: false,
      errors: [
        'BUBBLE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not "loud"',
        'BUBBLE_LOG_FORMAT must be pretty or json, not "xml"',
      ],
    });
  });
});
