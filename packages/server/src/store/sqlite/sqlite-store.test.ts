import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreContract } from '../store-contract.js';
import { openSqliteStore } from './sqlite-store.js';

describeStoreContract('sqlite', {
  newLocation: async () => join(await mkdtemp(join(tmpdir(), 'bubble-store-')), 'bubble.db'),
  open: (location, options) => openSqliteStore(location, options),
  dispose: async (location) => rm(join(location, '..'), { recursive: true, force: true }),
});
