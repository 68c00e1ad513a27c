/**
 * The `bubble-server` binary: parse the command line, build the logger,
 * handle signals. Everything else lives in the library (./index.ts).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { assertNever } from '@bubble/protocol';
import { pino } from 'pino';
import {
  exportCommand,
  importCommand,
  migrateCommand,
  openOperatorStore,
  redactedUrl,
  storageOf,
} from './cli/database-commands.js';
import { DumpError } from './cli/dump/export-import.js';
import { stopWithParent } from './cli/stop-with-parent.js';
import {
  parseCli,
  rateLimitsOf,
  USAGE,
  type DatabaseCommand,
  type PrincipalCommand,
  type ServeCommand,
} from './cli/parse-cli.js';
import { listPrincipals, mintPrincipalToken, revokePrincipalTokens } from './cli/principal-commands.js';
import { resolveServeConfig } from './cli/serve-config.js';
import { createBubbleServer, type BubbleServer } from './create-bubble-server.js';
import { BubbleError } from './errors/bubble-error.js';
import { createHumanPrincipal } from './services/principal-service.js';
import { SchemaTooNewError } from './store/migrations/migration-plan.js';
import { StoreUnavailableError } from './store/postgres/postgres-errors.js';
import type { BubbleStore } from './store/store.js';

class UsageError extends Error {}

function readConfigFile(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read --config ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

async function serve(command: ServeCommand): Promise<void> {
  const storage = storageOf(command.storage);
  const config = resolveServeConfig(command, readConfigFile(command.configFile));
  if (!config.ok) throw new UsageError(config.errors.join('\nbubble-server: '));
  const logger = pino({ level: command.logLevel, base: { service: 'bubble-server' } }, pino.destination(2));
  // Signal handlers go in before the listening line is printed: whoever reads
  // that line may send SIGTERM at once.
  let server: BubbleServer | undefined;
  let stopping = false;
  let stopWatchingParent = (): void => {};
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    stopWatchingParent();
    logger.info({ signal }, 'shutting down');
    (server?.close() ?? Promise.resolve()).then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  stopWatchingParent = stopWithParent(() => {
    logger.warn('the npm process that started this server has exited');
    stop('SIGTERM');
  });
  const connections = {
    ...(command.maxConnections !== undefined ? { maxConnections: command.maxConnections } : {}),
    ...(command.maxConnectionsPerAddress !== undefined ? { maxPerAddress: command.maxConnectionsPerAddress } : {}),
  };
  server = await createBubbleServer({
    ...(storage.kind === 'postgres'
      ? { database: storage.url, postgres: config.postgres }
      : { dataDir: storage.dataDir }),
    host: command.host,
    port: command.port,
    logger,
    connections,
    trustedProxies: command.trustedProxies,
    rateLimits: rateLimitsOf(command),
    webRoot: command.webRoot ? resolve(command.webRoot) : undefined,
    oidc: config.oidc,
  });
  if (stopping) {
    await server.close();
    process.exit(0);
  }
  const where = storage.kind === 'postgres' ? { database: redactedUrl(storage.url) } : { dataDir: storage.dataDir };
  process.stdout.write(
    storage.kind === 'postgres' ? `database: ${where.database}\n` : `data folder: ${storage.dataDir}\n`,
  );
  process.stdout.write(`listening on ${server.url}\n`);
  logger.info(
    { url: server.url, ...where, oidcIssuer: config.oidc?.issuer, trustedProxies: command.trustedProxies },
    'listening',
  );
}

/** Runs one operator command on the database (which a running server may share) and prints its JSON answer on stdout. */
async function principalCommand(command: PrincipalCommand): Promise<void> {
  const store = await openOperatorStore(storageOf(command.storage));
  const run = (s: BubbleStore): Promise<unknown> => {
    switch (command.command) {
      case 'create-human':
        return createHumanPrincipal(s, command.principalId, command.displayName ?? null);
      case 'list-principals':
        return listPrincipals(s);
      case 'mint-token':
        return mintPrincipalToken(s, command.principalId);
      case 'revoke-tokens':
        return revokePrincipalTokens(s, command.principalId);
      default:
        return assertNever(command, 'command');
    }
  };
  try {
    process.stdout.write(`${JSON.stringify(await run(store))}\n`);
  } finally {
    await store.close();
  }
}

/** `migrate`, `export` and `import`: a JSON answer on stdout (none for an export to stdout, which is the dump). */
async function databaseCommand(command: DatabaseCommand): Promise<void> {
  const storage = storageOf(command.storage);
  let answer: unknown;
  switch (command.command) {
    case 'migrate':
      answer = await migrateCommand(storage);
      break;
    case 'export':
      answer = await exportCommand(storage, command.file, process.stdout);
      break;
    case 'import':
      answer = await importCommand(storage, command.file, process.stdin);
      break;
    default:
      return assertNever(command, 'command');
  }
  if (answer !== undefined) process.stdout.write(`${JSON.stringify(answer)}\n`);
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseCli(argv, process.env);
  if (!parsed.ok) {
    process.stderr.write(`bubble-server: ${parsed.errors.join('\nbubble-server: ')}\n\n${USAGE}`);
    return 2;
  }
  const command = parsed.value;
  try {
    switch (command.command) {
      case 'help':
        process.stdout.write(USAGE);
        return 0;
      case 'serve':
        await serve(command);
        return -1;
      case 'create-human':
      case 'list-principals':
      case 'mint-token':
      case 'revoke-tokens':
        await principalCommand(command);
        return 0;
      case 'migrate':
      case 'export':
      case 'import':
        await databaseCommand(command);
        return 0;
      default:
        return assertNever(command, 'command');
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`bubble-server: ${error.message}\n`);
      return 2;
    }
    if (error instanceof StoreUnavailableError) {
      const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
      process.stderr.write(`bubble-server: cannot reach the database: ${cause}\n`);
      return 1;
    }
    if (error instanceof BubbleError || error instanceof DumpError || error instanceof SchemaTooNewError) {
      process.stderr.write(`bubble-server: ${error.message}\n`);
      return 1;
    }
    if (typeof (error as { severity?: unknown }).severity === 'string') {
      // An error PostgreSQL itself answered (an unknown database, a refused login): its words are the clearest.
      process.stderr.write(`bubble-server: PostgreSQL: ${(error as Error).message}\n`);
      return 1;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      process.stderr.write(`bubble-server: cannot listen: ${(error as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`bubble-server: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

const exitCode = await main(process.argv.slice(2));
// `serve` keeps running until a signal; every other command ends here.
if (exitCode >= 0) process.exitCode = exitCode;
