import { describe, expect, it } from 'vitest';
import { DataFolderInUse } from './data-lock.js';
import { explainLaunchError } from './launch-errors.js';

const options = { port: 7777, host: '127.0.0.1', data: './data' } as const;
const errno = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`raw ${code}`), { code, ...extra });

describe('explainLaunchError', () => {
  it.each([
    [
      errno('EADDRINUSE'),
      'port 7777 on 127.0.0.1 is in use by another program; stop it, or try npm start -- --port 7778',
    ],
    [errno('EADDRNOTAVAIL'), '--host 127.0.0.1 is not an address of this machine'],
    [errno('ENOTFOUND'), '--host 127.0.0.1 is not a name this machine can resolve'],
    [errno('EACCES', { syscall: 'listen' }), 'may not listen on port 7777 (ports below 1024 need root)'],
    [
      errno('EACCES', { syscall: 'mkdir', path: '/srv/x' }),
      'cannot write to the data folder ./data (/srv/x): permission denied',
    ],
    [errno('EROFS'), 'read-only file system'],
    [errno('ENOSPC'), 'the disk that holds ./data is full'],
    [new DataFolderInUse('/d', 42, undefined), 'another Bubble (pid 42) is running on the data folder /d'],
    [new Error('the data folder already has a principal "you"'), 'the data folder already has a principal "you"'],
  ])('%s', (error, said) => {
    expect(explainLaunchError(error, options)).toContain(said);
  });
});
