import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../testing/test-server.js';
import { client, type TestClient } from '../testing/test-client.js';

let server: TestServer;
const as: Record<string, TestClient> = {};
let shared: string;
beforeEach(async () => {
  server = await startTestServer();
  for (const [id, name] of [
    ['alice', 'Alice'],
    ['bob', 'Bob Stone'],
    ['carol', 'Carol'],
    ['u7', 'Scout'],
  ] as const) {
    as[id] = client(server.url, (await server.createHuman(id, name)).token.token);
  }
  shared = (await as.alice!.post('/v1/threads', {})).body.thread.threadId;
  // Invited (alice cannot see them yet), and accepted.
  for (const id of ['bob', 'u7']) {
    await as.alice!.post(`/v1/threads/${shared}/participants`, { principalId: id, role: 'member' });
    await as[id]!.post(`/v1/invitations/${shared}/accept`);
  }
});
afterEach(async () => {
  await server.stop();
});

const createBot = (who: string, body: Record<string, unknown>) =>
  as[who]!.post('/v1/principals', { kind: 'bot', ...body });

describe('a bot may not be named like someone the human naming it can see', () => {
  it.each([
    ['a visible display name', 'Bob Stone', 'bob'],
    ['the same name in another case, padded', '  bob   STONE ', 'bob'],
    ['its full-width form', 'Ｂｏｂ Ｓｔｏｎｅ', 'bob'],
    ['a visible id', 'BOB', 'bob'],
    ['the caller itself', 'alice', 'alice'],
  ])('refuses %s with 409 naming whom', async (_name, displayName, whom) => {
    const res = await createBot('alice', { principalId: 'helper', displayName });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'conflict', details: { field: 'displayName', principalId: whom } });
    expect(res.body.error.message).toContain(`is the name of ${whom}`);
    expect((await as.alice!.get('/v1/principals/helper')).status).toBe(404);
  });

  it('counts a bot without displayName by its id, and allows names nobody visible has', async () => {
    const res = await createBot('alice', { principalId: 'scout' });
    expect(res.status).toBe(409);
    expect(res.body.error.details.principalId).toBe('u7');
    // carol shares no thread with alice: invisible to her, so the name is free for alice's bot.
    expect((await createBot('alice', { principalId: 'helper', displayName: 'Carol' })).status).toBe(201);
    expect((await createBot('alice', { principalId: 'helper-2', displayName: 'Bob Stone the bot' })).status).toBe(201);
  });

  it('applies to renames too, seen from the owner and from the bot', async () => {
    const bot = client(
      server.url,
      (await createBot('alice', { principalId: 'helper', displayName: 'Helper' })).body.token.token,
    );
    expect((await as.alice!.call('PATCH', '/v1/principals/helper', { displayName: 'Scout' })).status).toBe(409);
    expect((await bot.call('PATCH', '/v1/principals/helper', { displayName: 'alice' })).status).toBe(409);
    // Its own id, and a new name, are fine.
    expect((await as.alice!.call('PATCH', '/v1/principals/helper', { displayName: 'HELPER' })).status).toBe(200);
    expect((await bot.call('PATCH', '/v1/principals/helper', { displayName: 'Research helper' })).status).toBe(200);

    // The bot works in a thread with dave, which alice has left: dave is the bot's to see, not alice's.
    const dave = client(server.url, (await server.createHuman('dave', 'Dave')).token.token);
    const t = (await as.alice!.post('/v1/threads', {})).body.thread.threadId;
    await as.alice!.post(`/v1/threads/${t}/participants`, { principalId: 'helper', role: 'member' });
    await as.alice!.post(`/v1/threads/${t}/participants`, { principalId: 'dave', role: 'member' });
    expect((await dave.post(`/v1/invitations/${t}/accept`)).status).toBe(200);
    await as.alice!.delete(`/v1/threads/${t}/participants/alice`);
    expect((await as.alice!.get('/v1/principals/dave')).status).toBe(404);
    const res = await as.alice!.call('PATCH', '/v1/principals/helper', { displayName: 'dave' });
    expect(res.status).toBe(409);
    // ...and alice is not told who it is.
    expect(res.body.error.details).toEqual({ field: 'displayName' });
    expect(res.body.error.message).toContain('someone helper works with');
    expect((await dave.get('/v1/auth/whoami')).status).toBe(200);
  });

  it('does not restrict people: two humans may share a name', async () => {
    expect((await as.bob!.call('PATCH', '/v1/principals/bob', { displayName: 'Alice' })).status).toBe(200);
  });
});
