import { pino } from 'pino';
import { runCli } from './run-cli.js';

// The binary: the one place that reads the environment, wires signals and picks the logger.
const argv = process.argv.slice(2);
const verbose = argv.includes('--verbose') || argv.includes('-v');
const logger = pino({ level: verbose ? 'debug' : 'silent' }, pino.destination(2));
const controller = new AbortController();
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  controller.abort();
});
process.on('SIGTERM', () => controller.abort());

const code = await runCli(argv, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: { url: process.env.BUBBLE_URL, token: process.env.BUBBLE_TOKEN },
  signal: controller.signal,
  logger,
});
process.exitCode = code;
