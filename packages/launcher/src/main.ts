/**
 * `npm start`: the binary. Reads the command line and the environment (the
 * only place that does), runs the product, prints the sign-in link, and stops
 * everything it started on SIGINT/SIGTERM.
 */
import { pino } from 'pino';
import { stopWithParent } from '@bubble/server';
import { launch, type Launched } from './launch.js';
import { modelModeOf, parseLaunchCli, USAGE } from './launch-options.js';

async function main(): Promise<void> {
  const parsed = parseLaunchCli(process.argv.slice(2));
  if (!parsed.ok) {
    process.stderr.write(`bubble-start: ${parsed.errors.join('\nbubble-start: ')}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if ('help' in parsed) {
    process.stdout.write(USAGE);
    return;
  }
  const options = parsed.value;
  const logger = pino(
    { level: process.env.BUBBLE_LOG_LEVEL ?? 'warn', base: { service: 'bubble-start' } },
    pino.destination(2),
  );
  const mode = modelModeOf(process.env);

  let launched: Launched | undefined;
  let stopping = false;
  let stopWatchingParent = (): void => {};
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      process.stderr.write('bubble-start: second signal, exiting at once\n');
      process.exit(1);
    }
    stopping = true;
    stopWatchingParent();
    process.stdout.write(`\nstopping (${signal})…\n`);
    (launched?.stop() ?? Promise.resolve()).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  stopWatchingParent = stopWithParent(() => stop('SIGTERM'));

  try {
    launched = await launch({
      dataDir: options.data,
      host: options.host,
      port: options.port,
      mode,
      env: process.env,
      logger,
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    process.stderr.write(
      code === 'EADDRINUSE'
        ? `bubble-start: port ${options.port} is in use; try npm start -- --port ${options.port + 1}\n`
        : `bubble-start: ${(error as Error).message}\n`,
    );
    process.exit(1);
  }
  if (stopping) return;
  const lines = [
    `Bubble is running: ${launched.url} (data in ${launched.server.dataDir})`,
    mode === 'claude'
      ? 'The bot "claude" talks to Claude (credentials from your environment).'
      : 'The bot "claude" runs on the offline model double: set CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY to talk to Claude.',
    `Bot logs: ${launched.scubaLogPath}`,
    '',
    `Sign in: ${launched.signInLink}`,
    '',
    'Press Ctrl-C to stop.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
