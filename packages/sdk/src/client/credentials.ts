/**
 * Where a client's bearer comes from. A local token (`bubble_user_…`, `bubble_agent_…`) never
 * changes. An access token from an identity provider expires: its owner renews it before then,
 * and again when the server refuses it (HTTP 401, WebSocket close 4001).
 *
 * The client asks `current()` before every request and every `client.auth`, so a token renewed in
 * the background is picked up at once; it calls `renew` once per refusal, never in a loop.
 */
export interface Credentials {
  /** The bearer to send now. */
  current(): string | Promise<string>;
  /**
   * The server refused `rejected`. Answers a bearer to try once more, or null when there is none
   * (the person has to sign in again). A source that renewed since it handed out `rejected`
   * answers the newer one without asking its issuer again.
   */
  renew?(rejected: string): Promise<string | null>;
}

/** A bearer that never changes: a refusal is final. */
export function staticCredentials(token: string): Credentials {
  return { current: () => token };
}
