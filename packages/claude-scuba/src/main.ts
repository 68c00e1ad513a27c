import { configPathFromArgv } from '@bubble/engine';
import { homedir } from 'node:os';
import { startBot } from './bot.js';
import { loadConfigFile } from './config/load-config.js';
import { isScubaError } from './errors.js';
import { createLogger } from './logger.js';

/**
 * `claude-scuba --config <file>`: the binary. The only place that reads
 * process.env and argv, installs signal handlers and exits.
 * Exit codes: 0 stopped by a signal, 1 failed at or after boot (e.g. the
 * token belongs to another principal), 2 bad usage or config.
 */
const USAGE = 'usage: claude-scuba --config <file>';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const path = configPathFromArgv(argv);
  if (!path) {
    process.stderr.write(`claude-scuba: no config file given\n${USAGE}\n`);
    return 2;
  }
  let loaded;
  try {
    loaded = loadConfigFile(path, {
      env: process.env,
      isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
    });
  } catch (error) {
    if (isScubaError(error)) {
      process.stderr.write(`claude-scuba: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const { config } = loaded;
  const logger = createLogger(config.logger);
  for (const warning of loaded.warnings) logger.warn({ config: loaded.path }, warning);

  let bot;
  try {
    bot = await startBot({
      config,
      logger,
      childPath: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      configPath: loaded.path,
      home: homedir(),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    logger.fatal({ err: error, code: isScubaError(error) ? error.code : undefined }, message);
    process.stderr.write(`claude-scuba: ${message}\n`);
    logger.flush?.();
    return 1;
  }
  logger.info({ principalId: bot.principalId }, 'claude-scuba running');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    void bot.stop();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const end = await bot.done;
  if (end.kind === 'failed') {
    logger.fatal({ err: end.error }, 'the bot runtime failed');
    return 1;
  }
  logger.info('stopped');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Open handles (a CLI child that ignores stdin end, a keep-alive socket) must not keep a stopped bot alive.
    setTimeout(() => process.exit(code), 2_000).unref();
  },
  (error: unknown) => {
    process.stderr.write(`claude-scuba: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
