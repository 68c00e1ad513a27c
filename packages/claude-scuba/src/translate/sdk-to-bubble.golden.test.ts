import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { replayFixture } from './golden.js';

/**
 * Golden tests: every SDK stream under `__fixtures__/*.jsonl` (hand-made from
 * engine-notes §2) and under the engine's `src/__fixtures__/*.jsonl`
 * (recorded from the real CLI against the model double) is replayed through
 * the translator and compared with `<name>.expected.json` in this package.
 * `UPDATE_GOLDEN=1` rewrites the expectations: review the diff by eye.
 */
const here = dirname(fileURLToPath(import.meta.url));
const ownDir = join(here, '__fixtures__');
const engineDir = join(here, '../../../engine/src/__fixtures__');
const update = process.env.UPDATE_GOLDEN === '1';

function streams(dir: string, expectedDir: string): Array<[string, string, string]> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl') && isSdkStream(join(dir, name)))
    .sort()
    .map((name) => [
      basename(name, '.jsonl'),
      join(dir, name),
      join(expectedDir, `${basename(name, '.jsonl')}.expected.json`),
    ]);
}

/** Engine fixtures also hold other recordings (error texts); only SDK message streams are replayed. */
function isSdkStream(path: string): boolean {
  const first = readFileSync(path, 'utf8')
    .split('\n')
    .find((line) => line.trim() !== '');
  if (!first) return false;
  try {
    const type = (JSON.parse(first) as { type?: unknown }).type;
    return (
      typeof type === 'string' &&
      ['system', 'stream_event', 'assistant', 'user', 'result', 'command_lifecycle', '__harness'].includes(type)
    );
  } catch {
    return false;
  }
}

const cases = [
  ...streams(ownDir, ownDir),
  ...streams(engineDir, join(ownDir, 'engine')).map(([n, s, e]) => [`engine/${n}`, s, e] as [string, string, string]),
];

describe('sdk-to-bubble golden streams', () => {
  it('has hand-made streams to replay', () => {
    expect(cases.length).toBeGreaterThanOrEqual(8);
  });

  it.each(cases)('%s', (_name, streamPath, expectedPath) => {
    const actual = replayFixture(readFileSync(streamPath, 'utf8'));
    if (update) writeFileSync(expectedPath, `${JSON.stringify(actual, null, 2)}\n`);
    expect(existsSync(expectedPath), `${expectedPath} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
    expect(actual).toEqual(JSON.parse(readFileSync(expectedPath, 'utf8')));
  });
});
