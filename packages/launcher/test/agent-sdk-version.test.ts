import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The Agent SDK is a dependency of several packages (the engine, both bots, the model double's
 * recorder) and they must move together: one version, the one installed, and the CLI version
 * the recorded fixtures were taken with is the one that SDK bundles.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SDK = '@anthropic-ai/claude-agent-sdk';

const readJson = async (path: string): Promise<Record<string, any>> => JSON.parse(await readFile(path, 'utf8'));

async function pins(): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  const manifests = [join(root, 'package.json')];
  for (const name of await readdir(join(root, 'packages')))
    manifests.push(join(root, 'packages', name, 'package.json'));
  for (const path of manifests) {
    const manifest = await readJson(path).catch(() => undefined);
    if (manifest === undefined) continue;
    for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
      const range = manifest[field]?.[SDK];
      if (typeof range === 'string') found[`${manifest.name} ${field}`] = range;
    }
  }
  return found;
}

describe('one Agent SDK version', () => {
  it('is pinned exactly, alike in every package, and is the one installed', async () => {
    const found = await pins();
    expect(Object.keys(found).length).toBeGreaterThanOrEqual(3);
    const installed = (await readJson(join(root, 'node_modules', SDK, 'package.json'))).version as string;
    const wrong = Object.entries(found).filter(([, range]) => range !== installed);
    expect(wrong, `every package pins ${SDK} at ${installed} exactly`).toEqual([]);
  });

  it('matches the CLI version the claude-scuba fixtures were recorded with', async () => {
    const sdk = await readJson(join(root, 'node_modules', SDK, 'package.json'));
    const dir = join(root, 'packages/claude-scuba/src/translate/__fixtures__');
    const recorded = new Set<string>();
    for (const name of (await readdir(dir)).filter((n) => n.endsWith('.jsonl'))) {
      for (const match of (await readFile(join(dir, name), 'utf8')).matchAll(/"claude_code_version":\s*"([^"]+)"/g))
        recorded.add(match[1] as string);
    }
    expect(recorded.size, 'the fixtures record the CLI version').toBeGreaterThan(0);
    expect([...recorded]).toEqual([sdk.claudeCodeVersion]);
  });
});
