import { configPathFromArgv } from '@bubble/engine';
import { homedir } from 'node:os';
import { startDiscordBot } from './bot.js';
import { loadConfigFile } from './config/config.js';
import { isDiscordBotError } from './errors.js';
import { createLogger } from './logger.js';

/**
 * `bubble-discord --config <file>`: the binary. The only place that reads
 * process.env and argv, installs signal handlers and exits.
 * Exit codes: 0 stopped by a signal, 1 failed at boot (Discord refused the
 * login, the store cannot be opened), 2 bad usage or config.
 */
const USAGE = 'usage: bubble-discord --config <file>';
/** SIGTERM must end the process within 5 s (issue 14 §7): runs get 3 s, the rest is for the gateway and the store. */
const STOP_DEADLINE_MS = 4500;

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const path = configPathFromArgv(argv);
  if (!path) {
    process.stderr.write(`bubble-discord: no config file given\n${USAGE}\n`);
    return 2;
  }
  let loaded;
  try {
    loaded = loadConfigFile(path, { env: process.env });
  } catch (error) {
    if (isDiscordBotError(error)) {
      process.stderr.write(`bubble-discord: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const { config } = loaded;
  const logger = createLogger(config.logger);
  for (const warning of loaded.warnings) logger.warn({ config: loaded.path }, warning);
  // No instance-wide Claude credential: every run uses its sender's own token (buildChildEnv builds the child's env from scratch).
  for (const name of ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_AUTH_TOKEN']) {
    if (process.env[name] !== undefined)
      logger.warn(`${name} is set in the bot's environment; it is not used (each run uses its sender's own token)`);
  }

  let bot;
  try {
    bot = await startDiscordBot({
      config,
      logger,
      childPath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
      configPath: loaded.path,
      home: homedir(),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.fatal({ err: error, code: isDiscordBotError(error) ? error.code : undefined }, message);
    process.stderr.write(`bubble-discord: ${message}\n`);
    return 1;
  }
  logger.info({ dashboard: bot.dashboardUrl }, 'bubble-discord running');

  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stopping');
      const deadline = setTimeout(() => {
        logger.warn('stopping took too long; exiting anyway');
        resolveExit(0);
      }, STOP_DEADLINE_MS);
      deadline.unref();
      bot.stop().then(
        () => {
          clearTimeout(deadline);
          logger.info('stopped');
          resolveExit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'stopping failed');
          resolveExit(0);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

main().then(
  (code) => {
    process.exitCode = code;
    // Whatever still holds the event loop (a CLI child being killed, a socket) must not keep a stopped bot alive.
    setTimeout(() => process.exit(code), 300).unref();
  },
  (error: unknown) => {
    process.stderr.write(
      `bubble-discord: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
