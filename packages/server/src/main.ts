/**
 * The `bubble-server` binary: parse the command line, build the logger,
 * handle signals. Everything else lives in the library (./index.ts).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { stopWithParent } from './cli/stop-with-parent.js';
import { parseCli, rateLimitsOf, USAGE, type PrincipalCommand, type ServeCommand } from './cli/parse-cli.js';
import { listPrincipals, mintPrincipalToken, revokePrincipalTokens } from './cli/principal-commands.js';
import { resolveServeConfig } from './cli/serve-config.js';
import { createBubbleServer, DATABASE_FILE_NAME, type BubbleServer } from './create-bubble-server.js';
import { BubbleError } from './errors/bubble-error.js';
import { createHumanPrincipal } from './services/principal-service.js';
import { openSqliteStore } from './store/sqlite/sqlite-store.js';
import type { BubbleStore } from './store/store.js';

const POSTGRES_NOT_BUILT = 'PostgreSQL support is not built yet: use --data DIR for the embedded SQLite store';

function dataDirOf(storage: { data?: string | undefined; database?: string | undefined }): string {
  if (storage.database !== undefined) throw new UsageError(POSTGRES_NOT_BUILT);
  return resolve(storage.data ?? './data');
}

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
  const dataDir = dataDirOf(command.storage);
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
    dataDir,
    host: command.host,
    port: command.port,
    logger,
    connections,
    rateLimits: rateLimitsOf(command),
    ...(command.webRoot ? { webRoot: resolve(command.webRoot) } : {}),
    ...(config.oidc ? { oidc: config.oidc } : {}),
  });
  if (stopping) {
    await server.close();
    process.exit(0);
  }
  process.stdout.write(`data folder: ${dataDir}\n`);
  process.stdout.write(`listening on ${server.url}\n`);
  logger.info({ url: server.url, dataDir, oidcIssuer: config.oidc?.issuer }, 'listening');
}

/** Runs one operator command on the database (which a running server may share) and prints its JSON answer on stdout. */
async function principalCommand(command: PrincipalCommand): Promise<void> {
  const dataDir = dataDirOf(command.storage);
  mkdirSync(dataDir, { recursive: true });
  const store = await openSqliteStore(join(dataDir, DATABASE_FILE_NAME));
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
      default: {
        const never: never = command;
        throw new Error(`unhandled command ${JSON.stringify(never)}`);
      }
    }
  };
  try {
    process.stdout.write(`${JSON.stringify(await run(store))}\n`);
  } finally {
    await store.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseCli(argv);
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
      default: {
        const never: never = command;
        throw new Error(`unhandled command ${JSON.stringify(never)}`);
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`bubble-server: ${error.message}\n`);
      return 2;
    }
    if (error instanceof BubbleError) {
      process.stderr.write(`bubble-server: ${error.message}\n`);
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
