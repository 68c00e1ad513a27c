import { afterAll, beforeAll } from 'vitest';
import { freshDatabase, freshSchema, type TestDatabase } from '../../../test/support/test-postgres.js';
import { describeInvitationContract } from '../invitation-contract.js';
import { describeStoreContract, type StoreContractHarness } from '../store-contract.js';
import { openPostgresStore } from './postgres-store.js';

// One database for the file; each location is a schema of its own in it (a database each would
// cost a CREATE and a DROP DATABASE per test), dropped when its test is done.
let database: TestDatabase;
const schemas = new Map<string, TestDatabase>();
beforeAll(async () => {
  database = await freshDatabase('contract');
});
afterAll(async () => {
  for (const schema of schemas.values()) await schema.drop();
  await database.drop();
});

const harness: StoreContractHarness = {
  newLocation: async () => {
    const schema = await freshSchema(database.url, 'contract');
    schemas.set(schema.url, schema);
    return schema.url;
  },
  open: (location, options) => openPostgresStore(location, options),
  dispose: async (location) => {
    await schemas.get(location)?.drop();
    schemas.delete(location);
  },
};
describeStoreContract('postgres', harness);
describeInvitationContract('postgres', harness);
