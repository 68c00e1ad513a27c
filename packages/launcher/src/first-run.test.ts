import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubbleClient } from '@bubble/sdk';
import { createBubbleServer, type BubbleServer } from '@bubble/server';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureWorld, readLaunchState } from './first-run.js';

let dir: string | undefined;
let server: BubbleServer | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

describe('ensureWorld', () => {
  it('makes you, claude and the welcome thread once, reuses them, and notes a change of model mode', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bubble-first-run-'));
    server = await createBubbleServer({ dataDir: join(dir, 'data'), port: 0 });
    const statePath = join(dir, 'data', 'launcher', 'state.json');
    const logger = pino({ level: 'silent' });
    const first = await ensureWorld({ statePath, store: server.store, serverUrl: server.url, mode: 'double', logger });
    const again = await ensureWorld({ statePath, store: server.store, serverUrl: server.url, mode: 'double', logger });
    expect(again).toEqual(first);
    expect(statSync(statePath).mode & 0o777).toBe(0o600);

    const you = new BubbleClient({ url: server.url, token: first.userToken });
    const bot = new BubbleClient({ url: server.url, token: first.botToken });
    try {
      expect((await you.whoami()).principalId).toBe('you');
      expect(await bot.whoami()).toMatchObject({ principalId: 'claude', kind: 'bot', ownerPrincipalIds: ['you'] });
      expect((await you.listThreads()).map((t) => [t.threadId, t.title])).toEqual([
        [first.welcomeThreadId, 'Welcome to Bubble'],
      ]);
      expect((await you.listParticipants(first.welcomeThreadId)).map((g) => [g.principalId, g.role])).toEqual([
        ['you', 'owner'],
        ['claude', 'member'],
      ]);
      const notes = async () =>
        (await you.readEvents(first.welcomeThreadId, { after: 0 })).events
          .filter((e) => e.type === 'message_part' && (e.data.chunk as { type: string }).type === 'text-delta')
          .map((e) => [e.principalId, (e.data.chunk as { delta: string }).delta]);
      const once = await notes();
      expect(once).toHaveLength(1);
      expect(once[0]![0]).toBe('claude');
      expect(once[0]![1]).toContain('I am not running on Claude right now');

      await ensureWorld({ statePath, store: server.store, serverUrl: server.url, mode: 'claude', logger });
      const twice = await notes();
      expect(twice).toHaveLength(2);
      expect(twice[1]![1]).toContain('I run on **Claude**');
      expect(readLaunchState(statePath).notedMode).toBe('claude');
    } finally {
      you.close();
      bot.close();
    }
  });

  it('gives you and the bot new tokens when theirs were revoked while Bubble was stopped, and says whose', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bubble-first-run-'));
    server = await createBubbleServer({ dataDir: join(dir, 'data'), port: 0 });
    const statePath = join(dir, 'data', 'launcher', 'state.json');
    const logger = pino({ level: 'silent' });
    const world = { statePath, store: server.store, serverUrl: server.url, mode: 'double' as const, logger };
    const first = await ensureWorld(world);
    expect(first.renewed).toEqual([]);
    await server.store.revokeTokens('claude');
    const botOnly = await ensureWorld(world);
    expect(botOnly.renewed).toEqual(['claude']);
    expect(botOnly.userToken).toBe(first.userToken);
    expect(botOnly.botToken).not.toBe(first.botToken);
    await server.store.revokeTokens('you');
    await server.store.revokeTokens('claude');
    const both = await ensureWorld(world);
    expect(both.renewed).toEqual(['you', 'claude']);
    expect(readLaunchState(statePath)).toMatchObject({ userToken: both.userToken, botToken: both.botToken });
    const you = new BubbleClient({ url: server.url, token: both.userToken });
    const bot = new BubbleClient({ url: server.url, token: both.botToken });
    try {
      expect((await you.whoami()).principalId).toBe('you');
      expect((await bot.whoami()).principalId).toBe('claude');
    } finally {
      you.close();
      bot.close();
    }
    // The thread and its note are the same: only the tokens changed.
    expect(both.welcomeThreadId).toBe(first.welcomeThreadId);
    expect((await ensureWorld(world)).renewed).toEqual([]);
  });

  it('explains what to do when the data folder has "you" but the state file is gone', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bubble-first-run-'));
    server = await createBubbleServer({ dataDir: join(dir, 'data'), port: 0 });
    const logger = pino({ level: 'silent' });
    await ensureWorld({
      statePath: join(dir, 'state-a.json'),
      store: server.store,
      serverUrl: server.url,
      mode: 'double',
      logger,
    });
    await expect(
      ensureWorld({
        statePath: join(dir, 'state-b.json'),
        store: server.store,
        serverUrl: server.url,
        mode: 'double',
        logger,
      }),
    ).rejects.toThrow(/already has a principal "you" but no launcher state/);
  });
});
