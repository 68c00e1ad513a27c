import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';

const env = {
  DISCORD_BOT_TOKEN: 'bot-token',
  BUBBLE_DISCORD_SECRETS_KEY: 'a'.repeat(64),
  ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787',
};
const context = { env, baseDir: '/srv/bot', readFile: () => '' };
const minimal = {
  discord: { token: { env: 'DISCORD_BOT_TOKEN' }, applicationId: '123' },
  secretsKey: { env: 'BUBBLE_DISCORD_SECRETS_KEY' },
};

describe('resolveConfig', () => {
  it('fills defaults, makes paths absolute, resolves secrets without printing them, and freezes', () => {
    const result = resolveConfig(minimal, context);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    const { config } = result;
    expect(config.discord.apiUrl).toBe('https://discord.com/api');
    expect(config.discord.guildIds).toBeUndefined();
    expect(config.claude.configDir).toBe('/srv/bot/.discord/claude');
    expect(config.claude.workspaceRoot).toBe('/srv/bot/.discord/workspaces');
    expect(config.store.path).toBe('/srv/bot/.discord/state.db');
    expect(config.claude.baseUrl).toBe('http://127.0.0.1:8787');
    expect(config.limits.maxConcurrentRuns).toBe(2);
    expect(config.claude.approvals).toBe('none');
    expect(config.dashboard).toBeUndefined();
    expect(config.discord.token.reveal()).toBe('bot-token');
    expect(JSON.stringify(config)).not.toContain('bot-token');
    expect(Object.isFrozen(config.claude)).toBe(true);
  });

  it('lists every problem at once, in words, without secret values', () => {
    const result = resolveConfig(
      {
        discord: { token: 'inline-secret-value', applicationId: 'abc', apiUrl: 'ftp://x' },
        limits: { maxConcurrentRuns: 0 },
        claude: { approvals: 'maybe' },
        dashboard: {},
      },
      context,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const text = result.problems.join('\n');
    expect(text).toContain('discord.applicationId must be a Discord id');
    expect(text).toContain('discord.apiUrl must be an http(s) URL');
    expect(text).toContain('secretsKey is missing');
    expect(text).toContain('limits.maxConcurrentRuns must be at least 1');
    expect(text).toContain('claude.approvals must be one of "none", "buttons"');
    expect(text).toContain('dashboard.token is missing');
    expect(text).not.toContain('inline-secret-value');
  });

  it('names an unset environment variable, and warns on unknown keys', () => {
    const missing = resolveConfig({ ...minimal, secretsKey: { env: 'NOT_SET' } }, context);
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.problems).toContain('secretsKey: the environment variable NOT_SET is not set');
    const typo = resolveConfig({ ...minimal, limits: { maxConcurentRuns: 3 } }, context);
    expect(typo.ok && typo.warnings[0]).toContain('did you mean limits.maxConcurrentRuns?');
  });

  it('leaveOtherGuilds needs the list of guilds to stay in', () => {
    const alone = resolveConfig({ ...minimal, discord: { ...minimal.discord, leaveOtherGuilds: true } }, context);
    expect(alone.ok).toBe(false);
    if (!alone.ok)
      expect(alone.problems).toContain('discord.leaveOtherGuilds needs discord.guildIds (the guilds to stay in)');
    const listed = resolveConfig(
      { ...minimal, discord: { ...minimal.discord, guildIds: ['456'], leaveOtherGuilds: true } },
      context,
    );
    expect(listed.ok && listed.config.discord.leaveOtherGuilds).toBe(true);
  });
});
