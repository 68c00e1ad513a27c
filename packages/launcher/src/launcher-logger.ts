import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LaunchEnv } from './launch-options.js';

/**
 * The launcher's logger (the server's is its child), on stderr: pino-pretty
 * lines for a person at a terminal, JSON lines for a collector. Pretty runs in
 * this thread, synchronously, so the last lines before an exit are not lost.
 */
export function createLauncherLogger(options: Pick<LaunchEnv, 'logLevel' | 'logFormat'>): Logger {
  const base = { level: options.logLevel, base: { service: 'bubble-start' } };
  if (options.logFormat === 'json') return pino(base, pino.destination(2));
  return pino(
    base,
    pinoPretty({
      destination: 2,
      sync: true,
      colorize: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: 'pid,hostname,service',
      singleLine: true,
    }),
  );
}
