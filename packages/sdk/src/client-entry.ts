/**
 * `@bubble/sdk/client`: the HTTP client and the live connection alone, without the bot
 * runtime's SQLite checkpoint store or the terminal client, so a browser bundle can use them
 * (it maps `ws` to the native WebSocket and `node:crypto` to `crypto.randomUUID`).
 */
export { BubbleClient } from './client/bubble-client.js';
export { BubbleApiError } from './client/bubble-api-error.js';
export type { LiveState } from './live/live-options.js';
export {
  CredentialsUnavailable,
  isCredentialsUnavailable,
  isProviderUnreachableMessage,
  type Credentials,
} from './client/credentials.js';
export { inviteLink, inviteTokenFromLocation, INVITE_TOKEN_PATTERN } from './client/invite-link.js';
export type { CreateInviteInput } from './client/bubble-client.js';
