import { DEFAULT_RATE_LIMITS } from '../http/rate-limiter.js';

/** The one rate limit of each kind: requests, frames, failed authentications. */
export type LimitName = keyof typeof DEFAULT_RATE_LIMITS;

/** How many seconds' worth of its rate a default limit's burst holds. */
export function burstSeconds(name: LimitName): number {
  return DEFAULT_RATE_LIMITS[name].burst / DEFAULT_RATE_LIMITS[name].perSecond;
}

/** What `bubble-server help` (and a usage error) prints. */
export const USAGE = `usage:
  bubble-server serve [--host 127.0.0.1] [--port 7777] [--data ./data | --database URL] [--log-level info]
                      [--pg-pool-size N] [--pg-statement-timeout-ms MS] [--pg-idle-in-transaction-timeout-ms MS]
                      [--web-root DIR] [--max-connections N] [--max-connections-per-address N]
                      [--trusted-proxies LIST]
                      [--rate-limit N|off] [--rate-limit-burst B]
                      [--frame-rate-limit N|off] [--frame-rate-limit-burst B]
                      [--failed-auth-limit N|off] [--failed-auth-limit-burst B]
                      [--oidc-issuer URL --oidc-audience AUD --oidc-client-id ID] [--config FILE]
  bubble-server principal create-human <id> [--display-name NAME] [--data ./data]
  bubble-server principal list [--data ./data]
  bubble-server principal mint-token <id> [--data ./data]
  bubble-server principal revoke-tokens <id> [--data ./data]
  bubble-server migrate [--data ./data | --database URL]
  bubble-server export [--data ./data | --database URL] [--file DUMP]
  bubble-server import [--data ./data | --database URL] [--file DUMP]

  Every principal command takes --database URL instead of --data, as serve does.

  principal create-human  creates a person and prints {"principal", "token"} with its bubble_user_ token, once
  principal list          prints every principal as one JSON array, ordered by id
  principal mint-token    prints {"principal", "token"} with a new token of that principal (human or bot), once
  principal revoke-tokens revokes every token of that principal, and every JWT of a person who signs in with
                          the identity provider issued before now; prints {"principalId", "revokedTokenIds",
                          "jwtsIssuedBefore"}; a running server on the same data closes their sockets (4003)
                          within about a second
  migrate                 applies the schema migrations the database lacks and exits; prints {"applied", "version"}.
                          serve and every other command migrate too, so this is for doing it ahead of a start
  export                  writes the whole database as JSON lines, thread by thread (principals, tokens with their
                          hashes, OIDC subjects, token revocations, then each thread with its grants, invites,
                          events, runs, cursors and artifacts), to --file (mode 0600) or stdout. Every id, seq and
                          token hash is kept, so a dump moves a server from SQLite to PostgreSQL and back
  import                  reads such a dump from --file or stdin into an empty database (refusing one with any
                          principal, token or thread), in one transaction; prints the rows imported per table

  --data DIR         folder of the SQLite database (created if missing, mode 0700; bubble.db and its -wal and
                     -shm are 0600 whatever the umask; default ./data)
  --database URL     a PostgreSQL database, postgres://USER[:PASSWORD]@HOST[:PORT]/DB (created tables are
                     migrated at start, under a lock); several serve processes may share it, and then see
                     each other's events, grants, revocations and who is online (an instance killed without
                     a word is offline for the others within 15 s)
  --pg-pool-size N              connections to PostgreSQL per serve process, this one's own (default 10, at
                                least 2): N instances open N times as many
  --pg-statement-timeout-ms MS  PostgreSQL cancels a statement running longer (default 30000; 0: never)
  --pg-idle-in-transaction-timeout-ms MS  PostgreSQL ends a session idle inside a transaction for longer, so a
                                stuck writer cannot hold its threads' locks against every instance (default
                                10000; 0: the database's own idle_in_transaction_session_timeout)
  --file DUMP        export: the file to write (default stdout); import: the file to read (default stdin)
  --log-level LEVEL  fatal, error, warn, info, debug, trace or silent (logs go to stderr)
  --web-root DIR     serve a built web app from DIR at / (the API under /v1 always wins)
  --max-connections N              open connections in all, to this instance (default 4096; past it new ones get 429)
  --max-connections-per-address N  open connections from one client address, to this instance (default 256)
  --trusted-proxies LIST  reverse proxies whose X-Forwarded-For names the client (or BUBBLE_TRUSTED_PROXIES;
                     default none): addresses and CIDR ranges, comma-separated, such as 127.0.0.1,::1 for
                     nginx on this machine. From one of them, the client address is the right-most
                     X-Forwarded-For entry that is not itself a trusted proxy (a malformed one: the proxy);
                     from anyone else the header is ignored. Failed sign-ins, the per-address connection cap
                     and the logs all count that address

  Sign-in with an identity provider (Auth0 or any OpenID provider): its JWT access tokens are accepted
  beside local tokens, and /v1/info tells browsers how to sign in. All three or none:
  --oidc-issuer URL     the issuer exactly as it names itself (Auth0: https://TENANT.auth0.com/ with the slash);
                        https, or http on a loopback address
  --oidc-audience AUD   the API identifier access tokens must carry in aud
  --oidc-client-id ID   the public client (Authorization Code with PKCE) the web UI signs in with
  --config FILE         a JSON file {"oidc": {"issuer", "audience", "clientId"}, "postgres": {"poolSize",
                        "statementTimeoutMs", "idleInTransactionTimeoutMs"}} (postgres with --database only);
                        flags win over it

  Rate limits are on by default; each takes a rate per second (fractions allowed), 0 or off turns it off,
  and its burst (how many at once) defaults to the same number of seconds' worth as the default's.
  A bot's requests and frames count against the human who created it.
  Rate limits, connection caps and the database pool are per instance: several serve processes on one
  database each count their own, so behind a load balancer over N instances a principal may get up to
  N times each rate, and the caps and pools add up.
  --rate-limit N               HTTP requests per second per principal (default ${DEFAULT_RATE_LIMITS.requests.perSecond}; over it 429 + Retry-After)
  --rate-limit-burst B         requests at once (default ${DEFAULT_RATE_LIMITS.requests.burst}, or ${burstSeconds('requests')}×N)
  --frame-rate-limit N         WebSocket frames per second per principal, all its sockets together
                               (default ${DEFAULT_RATE_LIMITS.frames.perSecond}; over it an error frame rate_limited, then 4008)
  --frame-rate-limit-burst B   frames at once (default ${DEFAULT_RATE_LIMITS.frames.burst}, or ${burstSeconds('frames')}×N)
  --failed-auth-limit N        failed authentications per second per client address, HTTP and WebSocket
                               (default ${DEFAULT_RATE_LIMITS.failedAuth.perSecond}; past it that address gets 429 for tokens not already in use)
  --failed-auth-limit-burst B  failed authentications at once (default ${DEFAULT_RATE_LIMITS.failedAuth.burst}, or ${burstSeconds('failedAuth')}×N)
`;
