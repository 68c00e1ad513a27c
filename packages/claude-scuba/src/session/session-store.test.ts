import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteSessionStore } from './session-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempPath = () => {
  const dir = mkdtempSync(join(tmpdir(), 'scuba-store-'));
  dirs.push(dir);
  return join(dir, 'nested', 'state.db');
};

describe('SqliteSessionStore', () => {
  it('fixes a workspace once, stores the session id, and keeps both across reopening', () => {
    const path = tempPath();
    const store = new SqliteSessionStore({ path, scope: 'bot-a' });
    expect(store.get('th_1')).toBeUndefined();
    expect(store.fixWorkspace('th_1', '/ws/th_1')).toEqual({
      threadId: 'th_1',
      workspace: '/ws/th_1',
      claudeSessionId: null,
    });
    expect(store.fixWorkspace('th_1', '/elsewhere/th_1').workspace).toBe('/ws/th_1');
    store.setClaudeSession('th_1', 'sess-1');
    store.close();

    const reopened = new SqliteSessionStore({ path, scope: 'bot-a' });
    expect(reopened.get('th_1')).toEqual({ threadId: 'th_1', workspace: '/ws/th_1', claudeSessionId: 'sess-1' });
    reopened.close();
  });

  it('keeps bots apart in one file', () => {
    const path = tempPath();
    const a = new SqliteSessionStore({ path, scope: 'bot-a' });
    const b = new SqliteSessionStore({ path, scope: 'bot-b' });
    a.fixWorkspace('th_1', '/a/th_1');
    expect(b.get('th_1')).toBeUndefined();
    a.close();
    b.close();
  });
});
