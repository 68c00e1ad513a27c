import { ARTIFACTS_EXTENSION } from '@bubble/protocol';
import { describe, expect, it } from 'vitest';
import { artifactsManifestMatches } from './artifacts-manifest.js';

const base = { name: 'bubble', version: '0.1.0', protocol: 1 };

describe('artifactsManifestMatches', () => {
  it('the SDK speaks artifacts v1', () => {
    expect(ARTIFACTS_EXTENSION.version).toBe(1);
  });

  it.each([
    ['the exact manifest', { ...base, extensions: { artifacts: { version: 1 } } }, true],
    [
      'the exact manifest beside other extensions',
      { ...base, extensions: { polls: { version: 3 }, artifacts: { version: 1 } } },
      true,
    ],
    [
      'the exact version with extra manifest fields',
      { ...base, extensions: { artifacts: { version: 1, maxBytes: 1048576 } } },
      true,
    ],
    ['a newer version', { ...base, extensions: { artifacts: { version: 2 } } }, false],
    ['an older version', { ...base, extensions: { artifacts: { version: 0 } } }, false],
    ['the version as a string', { ...base, extensions: { artifacts: { version: '1' } } }, false],
    ['no version', { ...base, extensions: { artifacts: {} } }, false],
    ['artifacts: true', { ...base, extensions: { artifacts: true } }, false],
    ['artifacts: null', { ...base, extensions: { artifacts: null } }, false],
    ['artifacts as an array', { ...base, extensions: { artifacts: [1] } }, false],
    ['no artifacts extension', { ...base, extensions: {} }, false],
    ['no extensions', { ...base }, false],
    ['extensions: null', { ...base, extensions: null }, false],
    ['an inherited artifacts key', { ...base, extensions: Object.create({ artifacts: { version: 1 } }) }, false],
    ['null info', null, false],
    ['a string', 'bubble', false],
  ])('%s → %s', (_name, info, expected) => {
    expect(artifactsManifestMatches(info)).toBe(expected);
  });
});
