import type { Logger } from 'pino';

/** Logs the first failure of a run at warn, and the ones that follow it at most every 10 s. */
export function failureLog(
  logger: Logger,
  message: string,
): (error: unknown, fields?: Record<string, unknown>) => void {
  let lastWarnAt = Number.NEGATIVE_INFINITY;
  return (error, fields = {}) => {
    const now = Date.now();
    if (now - lastWarnAt < 10_000) {
      logger.debug({ err: error, ...fields }, message);
      return;
    }
    lastWarnAt = now;
    logger.warn({ err: error, ...fields }, message);
  };
}
