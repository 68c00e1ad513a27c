/**
 * Calls `stop` once the process that started this one is gone, when that
 * process is npm (`npx bubble-server serve`, `npm start`). npm runs a bin
 * through `sh -c`; on SIGTERM it signals that shell, which exits without
 * passing the signal on, and the server would live on as an orphan that holds
 * its port and its database. A server that a shell started with `&` or `nohup`
 * (no npm in between) is left alone: outliving that shell is what was asked.
 *
 * The parent is gone when this process has been handed to another one
 * (`process.ppid` is read afresh on each access). Returns a function that
 * stops watching; call it once shutdown has begun, so that a parent that dies
 * from the same signal does not look like a second one.
 */
export function stopWithParent(
  stop: () => void,
  options: { env?: NodeJS.ProcessEnv; intervalMs?: number } = {},
): () => void {
  const { env = process.env, intervalMs = 500 } = options;
  const parentPid = process.ppid;
  if (env.npm_command === undefined || parentPid <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parentPid) return;
    clearInterval(timer);
    stop();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
