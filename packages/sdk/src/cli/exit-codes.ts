/** Exit codes of the `bubble` terminal client; scripts may rely on them. */
export const EXIT_CODES = Object.freeze({
  /** Done. */
  ok: 0,
  /** The server answered with an error (not found, forbidden, conflict, invalid request, …). */
  apiError: 1,
  /** The command line is wrong: unknown command or option, missing argument. */
  usage: 2,
  /** No credential, or the server did not accept it (401, WebSocket 4001/4003). */
  auth: 3,
  /** The server could not be reached, or did not answer in time. */
  unreachable: 4,
  /** `tail` only: the server ended the subscription (e.g. the grant was revoked). */
  subscriptionEnded: 5,
});
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
