import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../../../test/support/test-postgres.js';
import {
  isConnectionLost,
  isQueryTimeout,
  isRaceLost,
  isUnavailable,
  type PgErrorKind,
  pgErrorKind,
} from './postgres-errors.js';

/** An error as node-postgres reports one from the server: a DatabaseError with its SQLSTATE. */
const database = (code: string, message = 'the server said no'): Error => {
  const error = new pg.DatabaseError(message, message.length, 'error');
  error.code = code;
  return error;
};
const socket = (code: string): Error => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });

describe('pgErrorKind', () => {
  const table: Array<[string, unknown, PgErrorKind]> = [
    ['a reset socket', socket('ECONNRESET'), 'connection_lost'],
    ['a refused connection', socket('ECONNREFUSED'), 'connection_lost'],
    ['a broken pipe', socket('EPIPE'), 'connection_lost'],
    ['a connection exception (08006)', database('08006'), 'connection_lost'],
    ['an admin shutdown (57P01)', database('57P01'), 'connection_lost'],
    ['a crash shutdown (57P02)', database('57P02'), 'connection_lost'],
    ['cannot connect now (57P03)', database('57P03'), 'connection_lost'],
    ['idle in transaction too long (25P03)', database('25P03'), 'connection_lost'],
    ["node-postgres' lost connection", new Error('Connection terminated unexpectedly'), 'connection_lost'],
    ["node-postgres' closed client", new Error('Client was closed and is not queryable'), 'connection_lost'],
    ["node-postgres' query timeout", new Error('Query read timeout'), 'query_timeout'],
    ['a statement timeout (57014)', database('57014'), 'busy'],
    ['too many connections (53300)', database('53300'), 'busy'],
    ['a serialization failure (40001)', database('40001'), 'serialization'],
    ['a deadlock (40P01)', database('40P01'), 'serialization'],
    ['a unique violation (23505)', database('23505'), 'duplicate'],
    ['a NUL in text (22021)', database('22021', 'invalid byte sequence for encoding "UTF8": 0x00'), 'permanent'],
    ['a NUL in jsonb (22P05)', database('22P05', 'unsupported Unicode escape sequence'), 'permanent'],
    ['bad input syntax (22P02)', database('22P02'), 'permanent'],
    ['a value too long (22001)', database('22001'), 'permanent'],
    ['a not-null violation (23502)', database('23502'), 'permanent'],
    ['a foreign key violation (23503)', database('23503'), 'permanent'],
    ['a check violation (23514)', database('23514'), 'permanent'],
    ['an undefined table (42P01)', database('42P01'), 'permanent'],
    ['a syntax error (42601)', database('42601'), 'permanent'],
    ['a failed transaction (25P02)', database('25P02'), 'permanent'],
    [
      'a data exception whose message quotes input that reads like a lost connection',
      database('22P02', 'invalid input syntax for type integer: "Connection terminated unexpectedly"'),
      'permanent',
    ],
    ['a plain Error', new Error('something else'), 'permanent'],
    ['not an Error at all', 'Connection terminated', 'permanent'],
  ];

  it.each(table)('%s -> %s', (_name, error, kind) => {
    expect(pgErrorKind(error)).toBe(kind);
  });

  it.each(table)('%s: retried, 503 and connection given up only as its kind says', (_name, error, kind) => {
    expect({
      retried: isRaceLost(error) || (isConnectionLost(error) && !isQueryTimeout(error)),
      unavailable: isUnavailable(error),
      connectionLost: isConnectionLost(error),
    }).toEqual({
      retried: kind === 'connection_lost' || kind === 'serialization' || kind === 'duplicate',
      unavailable: kind !== 'permanent' && kind !== 'duplicate',
      connectionLost: kind === 'connection_lost' || kind === 'query_timeout',
    });
  });
});

describe('pgErrorKind of what PostgreSQL itself answers', () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await freshDatabase('errors');
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  it.each([
    ['a NUL in text', 'SELECT $1::text', ['a\u0000b']],
    ['a NUL escape in jsonb', 'SELECT $1::jsonb', ['{"a":"\\u0000"}']],
    ['a lost-connection message in bad input', 'SELECT $1::int', ['Connection terminated unexpectedly']],
    ['an undefined table', 'SELECT * FROM no_such_table', []],
  ])('%s is permanent, never retried', async (_name, sql, params) => {
    const error = await client.query(sql, params).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(pg.DatabaseError);
    expect(pgErrorKind(error)).toBe('permanent');
    expect(isRaceLost(error) || isConnectionLost(error) || isUnavailable(error)).toBe(false);
  });
});
