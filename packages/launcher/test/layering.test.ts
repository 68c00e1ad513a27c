import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The layering of architecture.md (protocol <- sdk <- bots; protocol <- server; nothing imports a
 * bot; no package imports another's src/) is kept by Biome's noRestrictedImports in the repo's
 * biome.json. This runs the real Biome with that config over probe files in a scratch copy of the
 * tree's shape, so a rule that stopped matching fails here rather than letting an import through.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const biome = join(root, 'node_modules/.bin/biome');
const run = promisify(execFile);

interface Diagnostic {
  category: string;
  message: string;
  location: { path: string };
}

let scratch: string;
let found: Diagnostic[];

const probes: Record<string, string> = {
  'packages/protocol/src/probe.ts': "import { a } from '@bubble/sdk';",
  'packages/server/src/probe.ts': "import { a } from '@bubble/sdk/client';",
  'packages/server/src/probe-ok.ts': "import { a } from '@bubble/protocol';",
  'packages/sdk/src/probe.ts': "import { a } from '@bubble/server';",
  'packages/sdk/src/probe-ok.ts': "import { a } from '@bubble/protocol';",
  'packages/engine/src/probe.ts': "import { a } from '@bubble/sdk';",
  'packages/web/src/probe.ts': "import { a } from '@bubble/claude-scuba';",
  'packages/web/src/probe-ok.ts': "import { a } from '@bubble/sdk/client';",
  'packages/claude-scuba/src/probe.ts': "import { a } from '@bubble/server';",
  'packages/claude-scuba/src/probe-ok.ts': "import { a } from '@bubble/engine';",
  'packages/discord-bot/src/probe.ts': "import { a } from '@bubble/claude-scuba';",
  'packages/launcher/src/probe.ts': "import { a } from '../../sdk/src/index.js';",
  'packages/launcher/src/probe-deep.ts': "import { a } from '@bubble/server/src/main.js';",
  'packages/launcher/src/probe-testing.ts': "import { a } from '@bubble/server/testing';",
  'packages/sdk/test/probe-ok.ts': "import { a } from '@bubble/server/testing';",
};

/** Two modules that import each other, a type-only import included (a circle of types is still a circle). */
const circle: Record<string, string> = {
  'packages/server/src/circle-a.ts': "import type { B } from './circle-b.js';\n\nexport interface A {\n  b: B;\n}\n",
  'packages/server/src/circle-b.ts': "import type { A } from './circle-a.js';\n\nexport interface B {\n  a: A;\n}\n",
};

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'bubble-layering-'));
  // biome.jsonc's comments are whole lines starting with //: drop them to read it as JSON.
  const text = (await readFile(join(root, 'biome.jsonc'), 'utf8'))
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n');
  const config = JSON.parse(text) as Record<string, unknown>;
  delete config.$schema;
  await writeFile(join(scratch, 'biome.json'), JSON.stringify(config));
  for (const [path, line] of Object.entries(probes)) {
    await mkdir(dirname(join(scratch, path)), { recursive: true });
    await writeFile(join(scratch, path), `${line}\n\nexport const b = a;\n`);
  }
  for (const [path, text] of Object.entries(circle)) await writeFile(join(scratch, path), text);
  // Biome exits 1 when it finds errors; the JSON report is on stdout either way.
  const result = await run(biome, ['lint', '--vcs-enabled=false', '--reporter=json', '.'], { cwd: scratch }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  found = (JSON.parse(result.stdout) as { diagnostics: Diagnostic[] }).diagnostics;
}, 60_000);

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function refusals(path: string): string[] {
  return found
    .filter((d) => d.category === 'lint/style/noRestrictedImports' && d.location.path.endsWith(path))
    .map((d) => d.message);
}

describe('no import circles, kept by Biome', () => {
  it('refuses two modules that import each other, even for types alone', () => {
    const cycles = found.filter((d) => d.category === 'lint/suspicious/noImportCycles').map((d) => d.location.path);
    expect(cycles.sort()).toEqual(Object.keys(circle).map((path) => expect.stringContaining(path)));
  });
});

describe('the layering of architecture.md, kept by Biome', () => {
  it.each([
    ['packages/protocol/src/probe.ts', /protocol is the spec in code/],
    ['packages/server/src/probe.ts', /server imports no client code/],
    ['packages/sdk/src/probe.ts', /sdk stands on protocol only/],
    ['packages/engine/src/probe.ts', /engine is the layer over the Agent SDK/],
    ['packages/web/src/probe.ts', /nothing imports a bot/],
    ['packages/claude-scuba/src/probe.ts', /claude-scuba is a client of the server/],
    ['packages/discord-bot/src/probe.ts', /imports no server or other bot/],
    ['packages/launcher/src/probe.ts', /never its src\//],
    ['packages/launcher/src/probe-deep.ts', /never its src\//],
    ['packages/launcher/src/probe-testing.ts', /test helpers are not built/],
  ])('refuses the import in %s', (path, message) => {
    expect(refusals(path)).toEqual([expect.stringMatching(message)]);
  });

  it.each([
    'packages/server/src/probe-ok.ts',
    'packages/sdk/src/probe-ok.ts',
    'packages/web/src/probe-ok.ts',
    'packages/claude-scuba/src/probe-ok.ts',
    'packages/sdk/test/probe-ok.ts',
  ])('lets the allowed import in %s through', (path) => {
    expect(refusals(path)).toEqual([]);
  });
});
