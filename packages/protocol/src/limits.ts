/** Size and count limits of the wire contract. */
export const LIMITS = Object.freeze({
  /** Largest HTTP request body, in bytes. */
  maxRequestBytes: 1024 * 1024,
  /** Largest `data` of one event, as UTF-8 JSON bytes. */
  maxEventDataBytes: 64 * 1024,
  /** Most events in one append batch. */
  maxBatchEvents: 500,
  /** Largest WebSocket frame, in bytes. */
  maxFrameBytes: 1024 * 1024,
  /** Live subscriptions one WebSocket may hold, however asked for (`subscribe`, `subscribe_batch`, `subscribe_grants`). */
  maxSubscriptionsPerSocket: 1000,
  /** Most subscriptions in one `subscribe_batch` frame (a full socket's worth). */
  maxSubscribeBatch: 1000,
  /** Largest artifact content, in bytes. */
  maxArtifactBytes: 1024 * 1024,
  /** Page size of event reads when `limit` is absent. */
  defaultPageLimit: 100,
  /** Largest page of event reads. */
  maxPageLimit: 1000,
  /** Seconds a WebSocket client has to send `client.auth`. */
  authTimeoutSeconds: 10,
  /** How deep subthreads nest below a top-level thread (ids stay short enough for every route and frame). */
  maxSubthreadDepth: 8,
});

/** How many subthread levels an id carries (a top-level thread is 0). */
export const subthreadDepth = (threadId: string): number => threadId.split('.sub-').length - 1;

/** WebSocket close codes used by the server. */
export const CLOSE_CODES = Object.freeze({
  /** Server shutting down. */
  goingAway: 1001,
  /** A frame over the size limit. */
  frameTooLarge: 1009,
  /** Not authenticated: no or bad `client.auth`, a late one, or a second one. */
  notAuthenticated: 4001,
  /** The credential the socket authenticated with was revoked. */
  credentialRevoked: 4003,
  /** The client could not keep up; it resumes from its last seq. */
  slowConsumer: 4008,
});
