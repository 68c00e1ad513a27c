import { describe, expect, it } from 'vitest';
import { parseCli, type ServeCommand } from './parse-cli.js';
import { resolveServeConfig } from './serve-config.js';

const serve = (...argv: string[]): ServeCommand => {
  const r = parseCli(['serve', ...argv]);
  if (!r.ok || r.value.command !== 'serve') throw new Error(JSON.stringify(r));
  return r.value;
};
const FLAGS = [
  '--oidc-issuer',
  'https://tenant.eu.auth0.com/',
  '--oidc-audience',
  'https://bubble.example.com',
  '--oidc-client-id',
  'abc',
];

describe('resolveServeConfig', () => {
  it('has no identity provider without flags or file', () => {
    expect(resolveServeConfig(serve(), undefined)).toEqual({ ok: true, oidc: undefined });
    expect(resolveServeConfig(serve('--config', 'c.json'), '{}')).toEqual({ ok: true, oidc: undefined });
  });

  it('takes the provider from the flags, from the file, and a flag over the file field by field', () => {
    const expected = {
      issuer: 'https://tenant.eu.auth0.com/',
      audience: 'https://bubble.example.com',
      clientId: 'abc',
    };
    expect(resolveServeConfig(serve(...FLAGS), undefined)).toEqual({ ok: true, oidc: expected });
    expect(resolveServeConfig(serve('--config', 'c.json'), JSON.stringify({ oidc: expected }))).toEqual({
      ok: true,
      oidc: expected,
    });
    const mixed = resolveServeConfig(
      serve('--config', 'c.json', '--oidc-client-id', 'from-flag'),
      JSON.stringify({ oidc: expected }),
    );
    expect(mixed).toEqual({ ok: true, oidc: { ...expected, clientId: 'from-flag' } });
    expect(
      resolveServeConfig(
        serve('--oidc-issuer', 'http://127.0.0.1:4000', '--oidc-audience', 'a', '--oidc-client-id', 'c'),
        undefined,
      ).ok,
    ).toBe(true);
  });

  it.each([
    [['--oidc-issuer', 'https://x.example/'], undefined, '--oidc-audience (or oidc.audience in --config) is needed'],
    [
      ['--oidc-audience', 'a', '--oidc-client-id', 'c'],
      undefined,
      '--oidc-issuer (or oidc.issuer in --config) is needed',
    ],
    [
      ['--oidc-issuer', 'http://idp.example', '--oidc-audience', 'a', '--oidc-client-id', 'c'],
      undefined,
      'must use https',
    ],
    [['--oidc-issuer', 'not a url', '--oidc-audience', 'a', '--oidc-client-id', 'c'], undefined, 'must be a URL'],
    [
      ['--oidc-issuer', 'https://x.example/?a=1', '--oidc-audience', 'a', '--oidc-client-id', 'c'],
      undefined,
      'no query or fragment',
    ],
    [['--config', 'c.json'], '{"oidc": {"issuer": "https://x/"', 'c.json is not JSON'],
    [['--config', 'c.json'], '{"oidc": {"isuer": "https://x/"}}', 'c.json: oidc: Unrecognized key: "isuer"'],
    [['--config', 'c.json'], '{"port": 1}', 'c.json: Unrecognized key: "port"'],
    [['--config', 'c.json'], '{"postgres": {"poolSize": 4}}', 'c.json: postgres: needs --database'],
    [
      ['--config', 'c.json', '--database', 'postgres://h/db'],
      '{"postgres": {"poolSize": 1}}',
      'c.json: postgres.poolSize: Too small',
    ],
    [
      ['--config', 'c.json', '--database', 'postgres://h/db'],
      '{"postgres": {"poolsize": 4}}',
      'c.json: postgres: Unrecognized key: "poolsize"',
    ],
  ])('refuses %j with file %j', (argv, file, message) => {
    const result = resolveServeConfig(serve(...argv), file);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.errors.join('\n')).toContain(message);
  });

  it('sizes the PostgreSQL pool from the flags, else the file, else the defaults; only with --database', () => {
    expect(resolveServeConfig(serve('--database', 'postgres://h/db'), undefined)).toEqual({
      ok: true,
      oidc: undefined,
      postgres: { poolSize: 10, statementTimeoutMs: 30_000, idleInTransactionTimeoutMs: 10_000 },
    });
    const file = JSON.stringify({
      postgres: { poolSize: 4, statementTimeoutMs: 1_000, idleInTransactionTimeoutMs: 0 },
    });
    expect(resolveServeConfig(serve('--database', 'postgres://h/db', '--config', 'c.json'), file)).toEqual({
      ok: true,
      oidc: undefined,
      postgres: { poolSize: 4, statementTimeoutMs: 1_000, idleInTransactionTimeoutMs: 0 },
    });
    expect(
      resolveServeConfig(
        serve(
          '--database',
          'postgres://h/db',
          '--config',
          'c.json',
          '--pg-pool-size',
          '30',
          '--pg-idle-in-transaction-timeout-ms',
          '2000',
        ),
        file,
      ),
    ).toEqual({
      ok: true,
      oidc: undefined,
      postgres: { poolSize: 30, statementTimeoutMs: 1_000, idleInTransactionTimeoutMs: 2_000 },
    });
    const sqlite = resolveServeConfig(serve(), undefined);
    expect(sqlite.ok && sqlite.postgres).toBeUndefined();
  });
});
