import { describe, expect, it } from 'vitest';
import { isEnvFileName, readableByOthers } from './private-files.js';

describe('readableByOthers', () => {
  it.each<[string, number, boolean]>([
    ['0600 is the owner alone', 0o100600, false],
    ['0400 likewise', 0o100400, false],
    ['0640: its group may read it', 0o100640, true],
    ['0644: everyone may read it', 0o100644, true],
    ['0602: the world may write it', 0o100602, true],
    ['0700 (an executable) is fine', 0o100700, false],
  ])('%s', (_name, mode, warned) => {
    const warnings = readableByOthers([{ path: '/etc/bubble/bot.env', mode, what: 'the env file' }]);
    expect(warnings.length > 0).toBe(warned);
  });

  it('says which file, its mode and the fix', () => {
    expect(readableByOthers([{ path: '/etc/bubble/bot.json', mode: 0o100644, what: 'the config file' }])).toEqual([
      "the config file /etc/bubble/bot.json is mode 0644: other users may read it; make it the bot user's alone (chmod 600 /etc/bubble/bot.json)",
    ]);
  });
});

describe('isEnvFileName', () => {
  it.each<[string, boolean]>([
    ['.env', true],
    ['research.env', true],
    ['.env.local', true],
    ['environment.json', false],
    ['scuba.json', false],
    ['envy', false],
  ])('%s -> %s', (name, expected) => {
    expect(isEnvFileName(name)).toBe(expected);
  });
});
