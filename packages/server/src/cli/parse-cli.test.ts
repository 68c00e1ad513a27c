import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_LIMITS } from '../http/rate-limiter.js';
import { parseCli, rateLimitsOf, type ServeCommand } from './parse-cli.js';

describe('parseCli', () => {
  it('parses serve with defaults and with every option', () => {
    expect(parseCli(['serve'])).toEqual({
      ok: true,
      value: { command: 'serve', host: '127.0.0.1', port: 7777, logLevel: 'info', storage: {} },
    });
    expect(parseCli(['serve', '--host', '0.0.0.0', '--port', '0', '--data', '/tmp/x', '--log-level', 'debug'])).toEqual(
      {
        ok: true,
        value: { command: 'serve', host: '0.0.0.0', port: 0, logLevel: 'debug', storage: { data: '/tmp/x' } },
      },
    );
  });

  it('parses rate limits', () => {
    const r = parseCli(['serve', '--rate-limit', '20', '--rate-limit-burst', '50']);
    expect(r.ok && r.value.command === 'serve' && [r.value.rateLimit, r.value.rateLimitBurst]).toEqual([20, 50]);
  });

  const limitsOf = (argv: string[]) => {
    const r = parseCli(['serve', ...argv]);
    if (!r.ok || r.value.command !== 'serve') throw new Error(`did not parse: ${JSON.stringify(r)}`);
    return rateLimitsOf(r.value as ServeCommand);
  };

  it('turns every rate limit on by default', () => {
    expect(limitsOf([])).toEqual(DEFAULT_RATE_LIMITS);
  });

  it.each([
    [['--rate-limit', '20'], { requests: { perSecond: 20, burst: 100 } }],
    [['--rate-limit', '20', '--rate-limit-burst', '50'], { requests: { perSecond: 20, burst: 50 } }],
    [['--rate-limit-burst', '9000'], { requests: { perSecond: 500, burst: 9000 } }],
    [['--rate-limit', '0.1'], { requests: { perSecond: 0.1, burst: 1 } }],
    [['--rate-limit', 'off'], { requests: false }],
    [['--rate-limit', '0'], { requests: false }],
    [['--frame-rate-limit', '50'], { frames: { perSecond: 50, burst: 500 } }],
    [['--frame-rate-limit', 'off'], { frames: false }],
    [['--failed-auth-limit', '0.5', '--failed-auth-limit-burst', '10'], { failedAuth: { perSecond: 0.5, burst: 10 } }],
    [['--failed-auth-limit', '2'], { failedAuth: { perSecond: 2, burst: 120 } }],
    [['--failed-auth-limit', 'off'], { failedAuth: false }],
  ])('rate limits from %j', (argv, changed) => {
    expect(limitsOf(argv)).toEqual({ ...DEFAULT_RATE_LIMITS, ...changed });
  });

  it('parses connection caps, and says what is wrong with a bad one', () => {
    const r = parseCli(['serve', '--max-connections', '100', '--max-connections-per-address', '10']);
    expect(r.ok && r.value.command === 'serve' && [r.value.maxConnections, r.value.maxConnectionsPerAddress]).toEqual([
      100, 10,
    ]);
    expect(parseCli(['serve', '--max-connections-per-address', '0'])).toEqual({
      ok: false,
      errors: ['--max-connections-per-address must be at least 1'],
    });
    expect(parseCli(['serve', '--max-connections', 'lots'])).toEqual({
      ok: false,
      errors: ['--max-connections must be a number'],
    });
  });

  it('parses trusted proxies from --trusted-proxies or BUBBLE_TRUSTED_PROXIES (the flag wins), and names a bad entry', () => {
    const proxiesOf = (argv: string[], env: Record<string, string> = {}) => {
      const r = parseCli(['serve', ...argv], env);
      return r.ok && r.value.command === 'serve' ? r.value.trustedProxies : r;
    };
    expect(proxiesOf([])).toBeUndefined();
    expect(proxiesOf(['--trusted-proxies', '127.0.0.1, ::1'])).toEqual(['127.0.0.1', '::1']);
    expect(proxiesOf([], { BUBBLE_TRUSTED_PROXIES: '10.0.0.0/8,fd00::/8' })).toEqual(['10.0.0.0/8', 'fd00::/8']);
    expect(proxiesOf(['--trusted-proxies', '::1'], { BUBBLE_TRUSTED_PROXIES: '10.0.0.0/8' })).toEqual(['::1']);
    expect(proxiesOf(['--trusted-proxies', ''], { BUBBLE_TRUSTED_PROXIES: '10.0.0.0/8' })).toEqual([]);
    expect(proxiesOf(['--trusted-proxies', '127.0.0.1,nginx'])).toEqual({
      ok: false,
      errors: ['--trusted-proxies: "nginx" is not an IPv4 or IPv6 address or a CIDR range such as 10.0.0.0/8'],
    });
    expect(proxiesOf([], { BUBBLE_TRUSTED_PROXIES: '10.0.0.0/40' })).toEqual({
      ok: false,
      errors: ['BUBBLE_TRUSTED_PROXIES: "10.0.0.0/40" has a prefix length out of range (0 to 32)'],
    });
    // The variable is serve's alone; other commands never read it.
    expect(parseCli(['migrate'], { BUBBLE_TRUSTED_PROXIES: 'nonsense' }).ok).toBe(true);
    expect(parseCli(['migrate', '--trusted-proxies', '::1'])).toEqual({
      ok: false,
      errors: ['--trusted-proxies does not belong to "migrate"'],
    });
  });

  it('parses principal create-human', () => {
    expect(parseCli(['principal', 'create-human', 'alice', '--display-name', 'Alice', '--data', './d'])).toEqual({
      ok: true,
      value: {
        command: 'create-human',
        principalId: 'alice',
        displayName: 'Alice',
        logLevel: 'warn',
        storage: { data: './d' },
      },
    });
  });

  it('parses the other principal commands', () => {
    expect(parseCli(['principal', 'list', '--data', './d'])).toEqual({
      ok: true,
      value: { command: 'list-principals', logLevel: 'warn', storage: { data: './d' } },
    });
    expect(parseCli(['principal', 'mint-token', 'bot-a'])).toEqual({
      ok: true,
      value: { command: 'mint-token', principalId: 'bot-a', logLevel: 'warn', storage: {} },
    });
    expect(parseCli(['principal', 'revoke-tokens', 'alice'])).toEqual({
      ok: true,
      value: { command: 'revoke-tokens', principalId: 'alice', logLevel: 'warn', storage: {} },
    });
  });

  it('parses the identity provider flags of serve', () => {
    const r = parseCli([
      'serve',
      '--oidc-issuer',
      'https://x.auth0.com/',
      '--oidc-audience',
      'https://api',
      '--oidc-client-id',
      'abc',
      '--config',
      'c.json',
    ]);
    expect(
      r.ok &&
        r.value.command === 'serve' && [
          r.value.oidcIssuer,
          r.value.oidcAudience,
          r.value.oidcClientId,
          r.value.configFile,
        ],
    ).toEqual(['https://x.auth0.com/', 'https://api', 'abc', 'c.json']);
  });

  it('accepts --database in the parser', () => {
    const r = parseCli(['serve', '--database', 'postgres://localhost/bubble']);
    expect(r.ok && r.value.command === 'serve' && r.value.storage.database).toBe('postgres://localhost/bubble');
  });

  it('parses the PostgreSQL pool flags of serve', () => {
    const r = parseCli([
      'serve',
      '--database',
      'postgresql://bubble:secret@db.internal:5433/bubble',
      '--pg-pool-size',
      '20',
      '--pg-statement-timeout-ms',
      '0',
      '--pg-idle-in-transaction-timeout-ms',
      '5000',
    ]);
    expect(
      r.ok &&
        r.value.command === 'serve' && [
          r.value.pgPoolSize,
          r.value.pgStatementTimeoutMs,
          r.value.pgIdleInTransactionTimeoutMs,
        ],
    ).toEqual([20, 0, 5_000]);
  });

  it('parses migrate, export and import, on either store', () => {
    expect(parseCli(['migrate', '--database', 'postgres://h/db'])).toEqual({
      ok: true,
      value: { command: 'migrate', logLevel: 'warn', storage: { database: 'postgres://h/db' } },
    });
    expect(parseCli(['export', '--data', './d', '--file', 'dump.jsonl'])).toEqual({
      ok: true,
      value: { command: 'export', file: 'dump.jsonl', logLevel: 'warn', storage: { data: './d' } },
    });
    expect(parseCli(['import', '--database', 'postgres://h/db'])).toEqual({
      ok: true,
      value: { command: 'import', logLevel: 'warn', storage: { database: 'postgres://h/db' } },
    });
    expect(parseCli(['principal', 'list', '--database', 'postgres://h/db'])).toEqual({
      ok: true,
      value: { command: 'list-principals', logLevel: 'warn', storage: { database: 'postgres://h/db' } },
    });
  });

  it('lists every problem of the PostgreSQL flags at once', () => {
    expect(
      parseCli(['serve', '--database', 'postgres://h/db', '--pg-pool-size', '1', '--pg-statement-timeout-ms=-5']),
    ).toEqual({
      ok: false,
      errors: ['--pg-pool-size must be at least 2', '--pg-statement-timeout-ms must be 0 (no limit) or more'],
    });
  });

  it.each([
    [['serve', '--port', 'abc'], '--port must be a number'],
    [['serve', '--port', '70000'], '--port must be between 0 and 65535'],
    [['serve', '--port', '1.5'], '--port must be a whole number'],
    [['serve', '--bogus'], "Unknown option '--bogus'"],
    [['serve', '--data', 'a', '--database', 'postgres://x'], 'use either --data or --database, not both'],
    [['principal', 'create-human'], 'needs exactly one <id>'],
    [['principal', 'create-human', 'Bad Id'], '<id> must match'],
    [['principal', 'create-human', 'alice', '--port', '1'], '--host, --port and --rate-limit belong to "serve"'],
    [['serve', '--rate-limit=-1'], '--rate-limit must be 0 (off) or above'],
    [['serve', '--rate-limit', 'lots'], '--rate-limit must be a number or off'],
    [['serve', '--frame-rate-limit', ''], '--frame-rate-limit must be a number or off'],
    [['serve', '--rate-limit', 'off', '--rate-limit-burst', '5'], '--rate-limit-burst needs --rate-limit on, not off'],
    [
      ['serve', '--failed-auth-limit', '0', '--failed-auth-limit-burst', '5'],
      '--failed-auth-limit-burst needs --failed-auth-limit on, not off',
    ],
    [['serve', '--rate-limit', '5', '--rate-limit-burst', '0'], '--rate-limit-burst must be at least 1'],
    [['serve', '--frame-rate-limit-burst', '1.5'], '--frame-rate-limit-burst must be a whole number'],
    [['principal', 'create-human', 'alice', '--failed-auth-limit', '1'], '--failed-auth-limit belongs to "serve"'],
    [['launch'], 'unknown command "launch"'],
    [['principal', 'list', 'alice'], '"principal list" takes no arguments'],
    [['principal', 'mint-token'], '"principal mint-token" needs exactly one <id>'],
    [['principal', 'revoke-tokens', 'Bad Id'], '<id> must match'],
    [['principal', 'mint-token', 'alice', '--display-name', 'A'], '--display-name belongs to "principal create-human"'],
    [['principal', 'list', '--oidc-issuer', 'https://x'], '--oidc-issuer belongs to "serve"'],
    [['principal', 'toString', 'x'], 'unknown command "principal toString x"'],
    [['serve', '--oidc-issuer', ''], '--oidc-issuer must not be empty'],
    [['serve', '--log-level', 'loud'], 'Invalid option'],
    [['serve', '--database', 'mysql://h/db'], '--database must be a postgres:// or postgresql:// URL'],
    [['serve', '--pg-pool-size', '4'], '--pg-pool-size needs --database'],
    [['serve', '--pg-statement-timeout-ms', '100', '--data', 'd'], '--pg-statement-timeout-ms needs --database'],
    [['serve', '--pg-idle-in-transaction-timeout-ms', '100'], '--pg-idle-in-transaction-timeout-ms needs --database'],
    [
      ['serve', '--database', 'postgres://h/db', '--pg-idle-in-transaction-timeout-ms=-1'],
      "--pg-idle-in-transaction-timeout-ms must be 0 (the database's own setting) or more",
    ],
    [['serve', '--database', 'postgres://h/db', '--pg-pool-size', 'many'], '--pg-pool-size must be a number'],
    [['serve', '--database', 'postgres://h/db', '--pg-pool-size', '2.5'], '--pg-pool-size must be a whole number'],
    [['principal', 'list', '--pg-pool-size', '4'], '--pg-pool-size belongs to "serve"'],
    [['migrate', '--port', '1'], '--port does not belong to "migrate"'],
    [['migrate', '--file', 'x'], '--file does not belong to "migrate"'],
    [['serve', '--file', 'x'], '--file belongs to "export" and "import"'],
    [['principal', 'list', '--file', 'x'], '--file belongs to "export" and "import"'],
    [['export', 'extra'], 'unknown command "export extra"'],
    [['import', '--database', 'postgres://h/db', '--data', 'd'], 'use either --data or --database, not both'],
  ])('rejects %j', (argv, message) => {
    const r = parseCli(argv);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.errors.join('\n')).toContain(message);
  });

  it('answers help', () => {
    expect(parseCli([])).toEqual({ ok: true, value: { command: 'help' } });
    expect(parseCli(['--help'])).toEqual({ ok: true, value: { command: 'help' } });
  });
});
