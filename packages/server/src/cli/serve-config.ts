import { z } from 'zod';
import { isHttpOnLoopback, type OidcOptions } from '../oidc/oidc-options.js';
import { POSTGRES_DEFAULTS } from '../store/postgres/postgres-pool.js';
import type { ServeCommand } from './parse-cli.js';

/**
 * The JSON file `serve --config FILE` reads: the identity provider, and the PostgreSQL pool (with
 * `--database`). Unknown keys are refused, so a typo never passes silently.
 */
const ConfigFileSchema = z.strictObject({
  oidc: z
    .strictObject({
      issuer: z.string().min(1).optional(),
      audience: z.string().min(1).optional(),
      clientId: z.string().min(1).optional(),
    })
    .optional(),
  postgres: z
    .strictObject({
      poolSize: z.number().int().min(2).optional(),
      statementTimeoutMs: z.number().int().min(0).optional(),
      idleInTransactionTimeoutMs: z.number().int().min(0).optional(),
    })
    .optional(),
});

/** The PostgreSQL pool of `serve --database`. */
export interface PostgresConfig {
  poolSize: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

export type ServeConfig =
  | { ok: true; oidc: OidcOptions | undefined; postgres?: PostgresConfig }
  | { ok: false; errors: string[] };

/**
 * The identity provider from `serve`'s flags and its config file's text (read by `main.ts`),
 * a flag winning over the file field by field; all three of issuer, audience and client id,
 * or none. The issuer must be an https URL (or http on a loopback address, for a provider on
 * this machine) with no query or fragment.
 */
export function resolveServeConfig(command: ServeCommand, fileText: string | undefined): ServeConfig {
  let file: z.infer<typeof ConfigFileSchema> = {};
  if (fileText !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(fileText);
    } catch (error) {
      return { ok: false, errors: [`${command.configFile} is not JSON: ${(error as Error).message}`] };
    }
    const parsed = ConfigFileSchema.safeParse(json);
    if (!parsed.success) {
      return {
        ok: false,
        errors: parsed.error.issues.map(
          (issue) =>
            `${command.configFile}: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`,
        ),
      };
    }
    file = parsed.data;
  }
  const errors: string[] = [];
  let postgres: PostgresConfig | undefined;
  if (command.storage.database !== undefined) {
    postgres = Object.freeze({
      poolSize: command.pgPoolSize ?? file.postgres?.poolSize ?? POSTGRES_DEFAULTS.poolSize,
      statementTimeoutMs:
        command.pgStatementTimeoutMs ?? file.postgres?.statementTimeoutMs ?? POSTGRES_DEFAULTS.statementTimeoutMs,
      idleInTransactionTimeoutMs:
        command.pgIdleInTransactionTimeoutMs ??
        file.postgres?.idleInTransactionTimeoutMs ??
        POSTGRES_DEFAULTS.idleInTransactionTimeoutMs,
    });
  } else if (file.postgres !== undefined) {
    errors.push(`${command.configFile}: postgres: needs --database (this server runs on SQLite)`);
  }
  const withPostgres = postgres === undefined ? {} : { postgres };
  const issuer = command.oidcIssuer ?? file.oidc?.issuer;
  const audience = command.oidcAudience ?? file.oidc?.audience;
  const clientId = command.oidcClientId ?? file.oidc?.clientId;
  if (issuer === undefined && audience === undefined && clientId === undefined) {
    return errors.length > 0 ? { ok: false, errors } : { ok: true, oidc: undefined, ...withPostgres };
  }
  const missing = (flag: string, key: string) =>
    errors.push(`${flag} (or oidc.${key} in --config) is needed to sign people in with an identity provider`);
  if (issuer === undefined) missing('--oidc-issuer', 'issuer');
  if (audience === undefined) missing('--oidc-audience', 'audience');
  if (clientId === undefined) missing('--oidc-client-id', 'clientId');
  if (issuer !== undefined) {
    const problem = issuerProblem(issuer);
    if (problem !== null) errors.push(problem);
  }
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    oidc: Object.freeze({ issuer: issuer!, audience: audience!, clientId: clientId! }),
    ...withPostgres,
  };
}

function issuerProblem(issuer: string): string | null {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return `--oidc-issuer must be a URL such as https://TENANT.auth0.com/, not ${JSON.stringify(issuer)}`;
  }
  if (url.search !== '' || url.hash !== '') return '--oidc-issuer must have no query or fragment';
  if (url.protocol === 'https:') return null;
  if (isHttpOnLoopback(url)) return null;
  return '--oidc-issuer must use https (http only on a loopback address such as 127.0.0.1)';
}
