import { client, type TestClient } from './test-client.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

export interface TestWorld {
  server: TestServer;
  /** A client per human, authenticated with its token. */
  as: Record<string, TestClient>;
  tokens: Record<string, string>;
  /** A client without credentials. */
  anonymous: TestClient;
  /** A client with any token. */
  withToken(token: string): TestClient;
  /** Creates a bot owned by `owner` and returns a client for it. */
  bot(owner: string, principalId: string): Promise<TestClient>;
  /** Creates a thread as `who` and returns its id. */
  thread(who: string, body?: Record<string, unknown>): Promise<string>;
  /** Adds `principalId` to a thread as `who`; a person `who` cannot see accepts the invitation this makes. */
  grant(who: string, threadId: string, principalId: string, role?: 'owner' | 'member'): Promise<void>;
  stop(): Promise<void>;
}

/** A real server with some humans created the way the operator CLI does it. */
export async function startTestWorld(
  humans: string[] = ['alice', 'bob', 'carol'],
  options: TestServerOptions = {},
): Promise<TestWorld> {
  const server = await startTestServer(options);
  const tokens: Record<string, string> = {};
  const as: Record<string, TestClient> = {};
  for (const id of humans) {
    const { token } = await server.createHuman(id);
    tokens[id] = token.token;
  }
  // Clients read the URL lazily so that they follow a restart.
  const bound = (token?: string): TestClient => {
    const lazy = (): TestClient => client(server.url, token);
    return {
      get: (p) => lazy().get(p),
      post: (p, b) => lazy().post(p, b),
      put: (p, b) => lazy().put(p, b),
      delete: (p) => lazy().delete(p),
      call: (m, p, b, e) => lazy().call(m, p, b, e),
    };
  };
  for (const id of humans) as[id] = bound(tokens[id]);
  const world: TestWorld = {
    server,
    as,
    tokens,
    anonymous: bound(),
    withToken: (token) => bound(token),
    async bot(owner, principalId) {
      const res = await as[owner]!.post('/v1/principals', { principalId, kind: 'bot' });
      if (res.status !== 201) throw new Error(`creating bot ${principalId}: ${res.status} ${res.text}`);
      tokens[principalId] = res.body.token.token;
      as[principalId] = bound(res.body.token.token);
      return as[principalId];
    },
    async thread(who, body = {}) {
      const res = await as[who]!.post('/v1/threads', body);
      if (res.status !== 201) throw new Error(`creating thread: ${res.status} ${res.text}`);
      return res.body.thread.threadId as string;
    },
    async grant(who, threadId, principalId, role = 'member') {
      const res = await as[who]!.post(`/v1/threads/${threadId}/participants`, { principalId, role });
      // A person `who` cannot see yet is invited (Consent): they accept, as they would in a client.
      const accepted =
        res.status === 202 && as[principalId] !== undefined
          ? await as[principalId].post(`/v1/invitations/${threadId}/accept`)
          : res;
      if (accepted.status !== 201 && accepted.status !== 200)
        throw new Error(`granting: ${accepted.status} ${accepted.text}`);
    },
    stop: () => server.stop(),
  };
  return world;
}
