import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StateStore } from './state-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function path(): string {
  const dir = mkdtempSync(join(tmpdir(), 'discord-store-'));
  dirs.push(dir);
  return join(dir, 'nested', 'state.db');
}

describe('StateStore', () => {
  it("keeps a thread's first cwd for ever, and its session, mode and model across a reopen", () => {
    const file = path();
    const store = StateStore.open(file);
    store.createThread({ threadId: 't1', cwd: '/w/t1', mode: 'chat', createdBy: 'u1', guildId: 'g' });
    store.createThread({ threadId: 't1', cwd: '/elsewhere', mode: 'agentic', createdBy: 'u2', guildId: 'g' });
    store.setSessionId('t1', 'sid-1');
    store.setMode('t1', 'agentic');
    store.setModel('t1', 'claude-haiku-4-5');
    store.close();
    const again = StateStore.open(file);
    expect(again.thread('t1')).toMatchObject({
      threadId: 't1',
      cwd: '/w/t1',
      sessionId: 'sid-1',
      mode: 'agentic',
      model: 'claude-haiku-4-5',
      createdBy: 'u1',
    });
    again.grantTool('t1', 'u1', 'Bash');
    again.resetThread('t1');
    expect(again.thread('t1')).toMatchObject({ sessionId: null, cwd: '/w/t1' });
    expect(again.isToolGranted('t1', 'u1', 'Bash')).toBe(false);
    again.close();
  });

  it("unlinking removes both token kinds and the user's grants", () => {
    const store = StateStore.open(path());
    store.putSealedToken('u1', 'claude', { sealed: 's1', keyId: 'k' });
    store.putSealedToken('u1', 'github', { sealed: 's2', keyId: 'k' });
    store.putSealedToken('u2', 'claude', { sealed: 's3', keyId: 'old' });
    store.grantTool('t1', 'u1', 'Bash');
    expect(store.tokensNotSealedWith('k')).toEqual([{ userId: 'u2', kind: 'claude', sealed: 's3', keyId: 'old' }]);
    // Re-sealing replaces only the value it read: a token linked again in between stays.
    expect(store.replaceSealedToken('u2', 'claude', 'stale', { sealed: 'x', keyId: 'k' })).toBe(false);
    expect(store.replaceSealedToken('u2', 'claude', 's3', { sealed: 's4', keyId: 'k' })).toBe(true);
    expect(store.tokensNotSealedWith('k')).toEqual([]);
    store.putSealedToken('u2', 'claude', { sealed: 's3', keyId: 'old' });
    expect(store.deleteTokens('u1')).toBe(2);
    expect(store.sealedToken('u1', 'claude')).toBeUndefined();
    expect(store.isToolGranted('t1', 'u1', 'Bash')).toBe(false);
    expect(store.sealedToken('u2', 'claude')).toEqual({ sealed: 's3', keyId: 'old' });
    store.close();
  });

  it('refuses a database written by a newer version, with a clear error', () => {
    const file = path();
    StateStore.open(file).close();
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => StateStore.open(file)).toThrow(/schema 99, newer than this bubble-discord/);
  });
});
