import { DataFolderInUse } from './data-lock.js';
import type { LaunchCli } from './launch-options.js';

/**
 * What `npm start` says when it cannot start, in words a person can act on:
 * which flag to change, or what to stop first. Everything not known here is
 * said as its own message (the launcher's errors are written to be read).
 */
export function explainLaunchError(error: unknown, options: LaunchCli): string {
  if (error instanceof DataFolderInUse) return error.message;
  const failure = error as NodeJS.ErrnoException & { syscall?: string; path?: string };
  const message = error instanceof Error ? error.message : String(error);
  switch (failure.code) {
    case 'EADDRINUSE':
      return `port ${options.port} on ${options.host} is in use by another program; stop it, or try npm start -- --port ${options.port + 1}`;
    case 'EADDRNOTAVAIL':
      return `--host ${options.host} is not an address of this machine; use 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `--host ${options.host} is not a name this machine can resolve; use an IP address such as 127.0.0.1`;
    case 'EACCES':
    case 'EPERM':
      if (failure.syscall === 'listen')
        return `this user may not listen on port ${options.port} (ports below 1024 need root); use --port 7777, or put nginx in front (README, "Deploying")`;
      return `cannot write to the data folder ${options.data}${failure.path ? ` (${failure.path})` : ''}: permission denied; use a folder of your own with --data`;
    case 'EROFS':
      return `the data folder ${options.data} is on a read-only file system; use another with --data`;
    case 'ENOSPC':
      return `the disk that holds ${options.data} is full; free some space, or use another folder with --data`;
    default:
      return message;
  }
}
