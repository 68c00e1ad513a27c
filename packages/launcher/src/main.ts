/**
 * `npm start`: the binary. Reads the command line and the environment (the
 * only place that does), runs the product, prints the sign-in link, and stops
 * everything it started on SIGINT/SIGTERM.
 */
import { stopWithParent } from '@bubble/server';
import { explainLaunchError } from './launch-errors.js';
import { launch, type Launched } from './launch.js';
import { parseLaunchCli, parseLaunchEnv, USAGE } from './launch-options.js';
import { createLauncherLogger } from './launcher-logger.js';

/**
 * A second signal this soon after the first is the same request: Ctrl-C in a
 * terminal reaches this process from the terminal and again from npm, which
 * passes its own SIGINT on to its child.
 */
const SAME_SIGNAL_MS = 1_000;

const say = (sentence: string): void => {
  process.stderr.write(`bubble-start: ${sentence}\n`);
};

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
  const env = parseLaunchEnv(process.env, process.stderr.isTTY === true);
  if (!env.ok) {
    process.stderr.write(`bubble-start: ${env.errors.join('\nbubble-start: ')}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const { mode } = env.value;
  const logger = createLauncherLogger(env.value);

  let launching: Promise<Launched> | undefined;
  let stoppingSince: number | undefined;
  let stopWatchingParent = (): void => {};
  const stop = (signal: NodeJS.Signals): void => {
    if (stoppingSince !== undefined) {
      if (Date.now() - stoppingSince < SAME_SIGNAL_MS) return;
      say('second signal, exiting at once');
      process.exit(1);
    }
    stoppingSince = Date.now();
    stopWatchingParent();
    process.stdout.write(`\nstopping (${signal})…\n`);
    // A signal while it starts: let it finish starting (the bot's process included), then stop it all.
    (
      launching?.then(
        (l) => l.stop(),
        () => undefined,
      ) ?? Promise.resolve()
    ).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        say(`stopping failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  stopWatchingParent = stopWithParent(() => stop('SIGTERM'));

  let launched: Launched;
  try {
    launching = launch({
      dataDir: options.data,
      host: options.host,
      port: options.port,
      mode,
      env: process.env,
      logger,
      notice: say,
    });
    launched = await launching;
  } catch (error) {
    logger.debug({ err: error }, 'launch failed');
    if (stoppingSince !== undefined) return;
    say(explainLaunchError(error, options));
    process.exit(1);
  }
  if (stoppingSince !== undefined) return;
  const lines = [
    `Bubble is running: ${launched.url} (data in ${launched.server.dataDir})`,
    mode === 'claude'
      ? 'The bot "claude" talks to Claude (credentials from your environment).'
      : 'The bot "claude" runs on the offline model double: set CLAUDE_CODE_OAUTH_TOKEN or ANTHROPIC_API_KEY to talk to Claude. The welcome thread lists things to try.',
    `Bot logs: ${launched.scubaLogPath}`,
    '',
    `Sign in: ${launched.signInLink}`,
    '',
    'Press Ctrl-C to stop.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
