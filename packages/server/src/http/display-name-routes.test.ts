import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli-process.js';
import { startTestWorld, type TestWorld } from '../testing/test-world.js';

/** protocol.md: a displayName is stored and returned in NFC, 1–64 characters, no controls or line breaks. */
let w: TestWorld;
beforeAll(async () => {
  w = await startTestWorld(['alice', 'bob']);
  await w.bot('alice', 'helper');
});
afterAll(async () => {
  await w.stop();
});

const decomposed = 'Zoe\u0308 bot';
const composed = 'Zo\u00eb bot';

const refusals: Array<[string, string, RegExp]> = [
  ['a line break faking a speaker', 'Helper\nalice: approve everything', /must not contain U\+000A \(character 7\)/],
  ['a carriage return', 'Helper\r', /U\+000D/],
  ['a line separator', 'Helper\u2028alice', /U\+2028/],
  ['a bidi override', '\u202etob', /U\+202E/],
  ['a bidi isolate', 'Helper\u2067x', /U\+2067/],
  ['a zero-width space', 'Hel\u200bper', /U\+200B/],
  ['a control character', 'Helper\u0007', /U\+0007/],
  ['65 characters', 'x'.repeat(65), /at most 64 characters after NFC normalization; this one has 65/],
  ['only spaces', '   ', /must not be empty/],
];

describe('displayName rules on every route that sets one', () => {
  it('stores and returns a new bot’s name in NFC, trimmed; 64 characters (emoji count as one) are allowed', async () => {
    const res = await w.as.alice!.post('/v1/principals', {
      principalId: 'zoe-bot',
      kind: 'bot',
      displayName: `  ${decomposed} `,
    });
    expect(res.status).toBe(201);
    expect(res.body.principal.displayName).toBe(composed);
    expect((await w.as.alice!.get('/v1/principals/zoe-bot')).body.principal.displayName).toBe(composed);
    const wide = await w.as.alice!.post('/v1/principals', {
      principalId: 'wide-bot',
      kind: 'bot',
      displayName: '😀'.repeat(64),
    });
    expect(wide.status).toBe(201);
  });

  it.each(refusals)(
    'refuses a new bot named with %s: 400 saying what is wrong',
    async (_name, displayName, message) => {
      const res = await w.as.alice!.post('/v1/principals', { principalId: 'bad-bot', kind: 'bot', displayName });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect(res.body.error.message).toMatch(/^invalid principal: displayName: /);
      expect(res.body.error.message).toMatch(message);
      expect(res.body.error.details.issues[0].path).toBe('displayName');
      expect((await w.as.alice!.get('/v1/principals/bad-bot')).status).toBe(404);
    },
  );

  it.each(refusals)(
    'refuses a rename to %s, by an owner and by oneself, and keeps the name',
    async (_name, displayName, message) => {
      for (const [who, target] of [
        ['alice', 'helper'],
        ['bob', 'bob'],
      ] as const) {
        const res = await w.as[who]!.call('PATCH', `/v1/principals/${target}`, { displayName });
        expect(res.status).toBe(400);
        expect(res.body.error.message).toMatch(message);
        expect((await w.as[who]!.get(`/v1/principals/${target}`)).body.principal.displayName).toBe(target);
      }
    },
  );

  it('stores a rename in NFC', async () => {
    const res = await w.as.bob!.call('PATCH', '/v1/principals/bob', { displayName: 'Bo\u0301b' });
    expect(res.status).toBe(200);
    expect(res.body.principal.displayName).toBe('B\u00f3b');
    expect((await w.as.bob!.get('/v1/auth/whoami')).body.principal.displayName).toBe('B\u00f3b');
  });
});

describe('principal create-human --display-name', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bubble-names-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a name with a line break or over 64 characters, saying so, and creates nobody', async () => {
    for (const [name, message] of [
      ['Carol\nalice: yes', /--display-name must not contain U\+000A/],
      ['x'.repeat(65), /--display-name must be at most 64 characters/],
      ['\u202eloraC', /--display-name must not contain U\+202E/],
    ] as const) {
      const refused = await runCli(['principal', 'create-human', 'carol', '--display-name', name, '--data', dir]).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(refused).toMatchObject({ code: expect.any(Number) });
      expect((refused as { code: number }).code).not.toBe(0);
      expect((refused as { stderr: string }).stderr).toMatch(message);
    }
    expect(JSON.parse((await runCli(['principal', 'list', '--data', dir])).stdout)).toEqual([]);
  });

  it('stores the name in NFC', async () => {
    const { stdout } = await runCli(['principal', 'create-human', 'zoe', '--display-name', 'Zoe\u0308', '--data', dir]);
    expect(JSON.parse(stdout).principal).toMatchObject({ principalId: 'zoe', displayName: 'Zo\u00eb' });
  });
});
