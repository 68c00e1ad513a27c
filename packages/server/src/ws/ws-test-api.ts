/**
 * Minimal HTTP calls the WebSocket tests make against the real server
 * (protocol.md routes). Not part of the library's exports.
 */
import type { EventEnvelope, Grant, Principal, Thread, Token } from '@bubble/protocol';

export class TestApi {
  readonly #baseUrl: string;

  constructor(
    baseUrl: string,
    readonly token: string,
  ) {
    this.#baseUrl = baseUrl;
  }

  async call<T>(method: string, path: string, body?: unknown, expectStatus?: number): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.#baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (expectStatus !== undefined ? response.status !== expectStatus : !response.ok) {
      throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  async createThread(options: { title?: string; parentThreadId?: string } = {}): Promise<Thread> {
    return (await this.call<{ thread: Thread }>('POST', '/v1/threads', options)).thread;
  }

  async append(
    threadId: string,
    events: Array<{ type: string; data: Record<string, unknown>; clientEventId?: string }>,
  ): Promise<EventEnvelope[]> {
    return (await this.call<{ events: EventEnvelope[] }>('POST', `/v1/threads/${threadId}/events`, { events })).events;
  }

  async note(threadId: string, text: string): Promise<EventEnvelope> {
    const [event] = await this.append(threadId, [{ type: 'test.note', data: { text } }]);
    if (event === undefined) throw new Error('append returned no event');
    return event;
  }

  async addParticipant(threadId: string, principalId: string, role: 'owner' | 'member' = 'member'): Promise<Grant> {
    return (await this.call<{ grant: Grant }>('POST', `/v1/threads/${threadId}/participants`, { principalId, role }))
      .grant;
  }

  /**
   * Adds a person: one this caller cannot see yet is invited (202, protocol.md's Consent), and
   * `invitee`, their own client, accepts; either way answers the grant.
   */
  async addPerson(
    threadId: string,
    principalId: string,
    invitee: TestApi,
    role: 'owner' | 'member' = 'member',
  ): Promise<Grant> {
    const answer = await this.call<{ grant?: Grant }>('POST', `/v1/threads/${threadId}/participants`, {
      principalId,
      role,
    });
    if (answer.grant !== undefined) return answer.grant;
    return (await invitee.call<{ grant: Grant }>('POST', `/v1/invitations/${threadId}/accept`, undefined, 200)).grant;
  }

  async removeParticipant(threadId: string, principalId: string): Promise<void> {
    await this.call('DELETE', `/v1/threads/${threadId}/participants/${principalId}`, undefined, 204);
  }

  async createBot(principalId: string): Promise<{ principal: Principal; token: Token }> {
    return this.call('POST', '/v1/principals', { principalId, kind: 'bot' }, 201);
  }

  async mintToken(principalId: string): Promise<Token> {
    return (await this.call<{ token: Token }>('POST', `/v1/principals/${principalId}/tokens`, {}, 201)).token;
  }

  async revokeToken(principalId: string, tokenId: string): Promise<void> {
    await this.call('DELETE', `/v1/principals/${principalId}/tokens/${tokenId}`, undefined, 204);
  }

  async revokeAllTokens(principalId: string): Promise<void> {
    await this.call('DELETE', `/v1/principals/${principalId}/tokens`, undefined, 204);
  }
}
