/**
 * `@bubble/sdk/client`: the HTTP client and the live connection alone, without the bot
 * runtime's SQLite checkpoint store or the terminal client, so a browser bundle can use them
 * as they are. A browser passes `live: { webSocketFactory: browserWebSocket }` (the native
 * WebSocket); without it the live connection opens `ws`'s socket, which works in Node only.
 */
export { BubbleClient } from './client/bubble-client.js';
export { BubbleApiError } from './client/bubble-api-error.js';
export type { LiveState } from './live/live-options.js';
export { browserWebSocket } from './live/ws-browser.js';
export type { WebSocketFactory, WebSocketLike, WebSocketListener } from './live/web-socket-like.js';
export {
  CredentialsUnavailable,
  isCredentialsUnavailable,
  isProviderUnreachableMessage,
  type Credentials,
} from './client/credentials.js';
export { inviteLink, inviteTokenFromLocation, INVITE_TOKEN_PATTERN } from './client/invite-link.js';
export type { CreateInviteInput } from './client/bubble-client.js';
/** The thread fold every client reads (pure, no I/O): safe in a browser bundle. */
export * from './fold/index.js';
