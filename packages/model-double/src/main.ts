/**
 * The `model-double` binary: `model-double --port 8787 [--host 127.0.0.1] [--script file.json | --demo]`.
 * Prints `model double listening on http://HOST:PORT` once it accepts connections.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { parseScriptJson, ScriptError } from './parse-script.js';
import { DEMO_SCRIPT } from './demo-script.js';
import { startModelDouble } from './model-double.js';
import type { Script } from './script.js';

const USAGE =
  'usage: model-double [--port 8787] [--host 127.0.0.1] [--script file.json | --demo] [--log-level warn] [--max-recorded 1000]';

async function main(): Promise<number> {
  let values: {
    port?: string;
    host?: string;
    script?: string;
    demo?: boolean;
    'log-level'?: string;
    'max-recorded'?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        script: { type: 'string' },
        demo: { type: 'boolean' },
        'log-level': { type: 'string' },
        'max-recorded': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = Number(values.port ?? '8787');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be an integer between 0 and 65535, got ${JSON.stringify(values.port)}\n`);
    return 2;
  }
  const maxRecorded = Number(values['max-recorded'] ?? '1000');
  if (!Number.isInteger(maxRecorded) || maxRecorded < 0) {
    process.stderr.write(`--max-recorded must be a whole number, got ${JSON.stringify(values['max-recorded'])}\n`);
    return 2;
  }
  const level = values['log-level'] ?? 'warn';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) {
    process.stderr.write(`--log-level must be one of fatal, error, warn, info, debug, trace, silent\n`);
    return 2;
  }
  if (values.demo === true && values.script !== undefined) {
    process.stderr.write(`--demo and --script are one or the other\n${USAGE}\n`);
    return 2;
  }
  let script: Script | undefined = values.demo === true ? DEMO_SCRIPT : undefined;
  if (values.script !== undefined) {
    try {
      script = parseScriptJson(await readFile(values.script, 'utf8'));
    } catch (err) {
      if (err instanceof ScriptError) process.stderr.write(`${values.script}: ${err.message}\n`);
      else process.stderr.write(`cannot read script ${values.script}: ${(err as Error).message}\n`);
      return 2;
    }
  }
  const logger = pino({ level, name: 'model-double' }, pino.destination(2));
  let double;
  try {
    double = await startModelDouble({
      port,
      host: values.host ?? '127.0.0.1',
      logger,
      maxRecorded,
      script,
    });
  } catch (err) {
    process.stderr.write(`model double could not start: ${(err as Error).message}\n`);
    return 1;
  }
  // Handlers go in before the ready line: a supervisor may signal as soon as it reads it.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  process.stdout.write(`model double listening on ${double.url}\n`);
  await stopped;
  await double.close();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`model double failed: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
