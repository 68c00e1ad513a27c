/**
 * Calls `stop` once the process that started this one is gone, when that
 * process is npm (`npx bubble-server serve`, `npm start`). npm runs a bin
 * through `sh -c`; on SIGTERM it signals that shell, which exits without
 * passing the signal on, and the server would live on as an orphan that holds
 * its port and its database. A server that a shell started with `&` or `nohup`
 * (no npm in between) is left alone: outliving that shell is what was asked.
 *
 * `process.ppid` is read once at startup in Node, so the original parent is
 * probed with signal 0 instead: ESRCH means it has exited.
 */
export function stopWithParent(
  stop: () => void,
  options: { env?: NodeJS.ProcessEnv; parentPid?: number; intervalMs?: number } = {},
): () => void {
  const { env = process.env, parentPid = process.ppid, intervalMs = 500 } = options;
  if (env['npm_command'] === undefined || parentPid <= 1) return () => {};
  const timer = setInterval(() => {
    if (isAlive(parentPid)) return;
    clearInterval(timer);
    stop();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
