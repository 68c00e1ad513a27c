import { describe, expect, it } from 'vitest';
import { buildChildEnv, credentialFromEnv } from './child-env.js';
import { EngineError } from './engine-error.js';

const base = { path: '/usr/bin:/bin', configDir: '/srv/bot/claude' } as const;

describe('buildChildEnv', () => {
  it('builds exactly the variables it chooses, with an API key', () => {
    expect(
      buildChildEnv({
        ...base,
        credential: { kind: 'api_key', key: 'sk-test' },
        baseUrl: 'http://127.0.0.1:8787',
        maxRetries: 1,
      }),
    ).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/srv/bot/claude',
      CLAUDE_CONFIG_DIR: '/srv/bot/claude',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787',
      ANTHROPIC_API_KEY: 'sk-test',
    });
  });

  it('uses the OAuth token and drops every stray credential passed in extra', () => {
    const env = buildChildEnv({
      ...base,
      home: '/srv/bot/home',
      tmpDir: '/srv/bot/tmp',
      credential: { kind: 'oauth', token: 'oat-1' },
      extra: {
        ANTHROPIC_API_KEY: 'stray',
        ANTHROPIC_AUTH_TOKEN: 'stray',
        CLAUDE_CODE_OAUTH_TOKEN: 'other',
        LANG: 'C.UTF-8',
      },
    });
    expect(env).toEqual({
      LANG: 'C.UTF-8',
      PATH: '/usr/bin:/bin',
      HOME: '/srv/bot/home',
      CLAUDE_CONFIG_DIR: '/srv/bot/claude',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '2',
      CLAUDE_CODE_TMPDIR: '/srv/bot/tmp',
      TMPDIR: '/srv/bot/tmp',
      CLAUDE_CODE_OAUTH_TOKEN: 'oat-1',
    });
  });

  it('does not let extra override the variables it owns, and sets no base URL unless asked', () => {
    const env = buildChildEnv({
      ...base,
      credential: { kind: 'api_key', key: 'k' },
      extra: {
        PATH: '/evil',
        CLAUDE_CONFIG_DIR: '/elsewhere',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '0',
        ANTHROPIC_BASE_URL: 'http://x',
      },
    });
    expect(env.PATH).toBe('/usr/bin:/bin');
    expect(env.CLAUDE_CONFIG_DIR).toBe('/srv/bot/claude');
    expect(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC).toBe('1');
    expect(env).not.toHaveProperty('ANTHROPIC_BASE_URL');
  });

  it('lists every problem in one clear error', () => {
    let caught: unknown;
    try {
      buildChildEnv({
        path: '',
        configDir: 'relative/dir',
        credential: { kind: 'oauth', token: '  ' },
        baseUrl: 'not a url',
        maxRetries: -1,
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EngineError);
    const error = caught as EngineError;
    expect(error.code).toBe('invalid_child_env');
    expect(error.message).toContain('path is empty');
    expect(error.message).toContain('configDir must be an absolute path');
    expect(error.message).toContain('OAuth token is empty');
    expect(error.message).toContain('baseUrl must be an http(s) URL');
    expect(error.message).toContain('maxRetries must be a non-negative integer');
  });
});

describe('credentialFromEnv', () => {
  it('prefers the OAuth token, then the API key, else none', () => {
    expect(credentialFromEnv({ CLAUDE_CODE_OAUTH_TOKEN: 'oat', ANTHROPIC_API_KEY: 'key' })).toEqual({
      kind: 'oauth',
      token: 'oat',
    });
    expect(credentialFromEnv({ ANTHROPIC_API_KEY: ' key ' })).toEqual({ kind: 'api_key', key: 'key' });
    expect(credentialFromEnv({ CLAUDE_CODE_OAUTH_TOKEN: '  ', PATH: '/bin' })).toBeUndefined();
  });
});
