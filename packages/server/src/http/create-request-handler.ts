import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIMITS } from '@bubble/protocol';
import type { Logger } from 'pino';
import { notFound, rateLimited, toErrorResponse } from '../errors/bubble-error.js';
import { newRequestId } from '../domain/ids.js';
import { authenticateHeader, type Authenticated } from '../services/auth-service.js';
import type { AuthenticateFrom } from '../services/auth-attempts.js';
import { budgetKeyOf } from '../domain/rate-limit-keys.js';
import { readJsonBody } from './read-json-body.js';
import type { Handler, LogFields, RequestContext } from './request-context.js';
import type { Router } from './router.js';
import type { RateLimiter } from './rate-limiter.js';

export interface RequestHandlerDeps {
  router: Router<Handler>;
  /** Bearer authentication from a client address, under the failed-auth limit. */
  authenticate: AuthenticateFrom;
  logger: Logger;
  /** Requests per principal (a bot's against its human), checked once a request is authenticated; absent: no limit. */
  rateLimiter?: RateLimiter | undefined;
  /** The client address of a request (the TCP peer, or whom a trusted proxy names); default the TCP peer. */
  clientAddress?: (req: IncomingMessage) => string | undefined;
  /** Whether the server is shutting down (answers then carry `Connection: close`). */
  closing: () => boolean;
}

/**
 * The HTTP edge: route, run the handler, and turn whatever it returns or
 * throws into the answer. This is the only place errors become responses.
 */
const API_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

export function createRequestHandler(deps: RequestHandlerDeps) {
  const { router, authenticate, logger } = deps;
  return (req: IncomingMessage, res: ServerResponse): void => {
    const started = process.hrtime.bigint();
    const requestId = newRequestId();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const pathname = q === -1 ? rawUrl : rawUrl.slice(0, q);
    const fields: LogFields = {};
    // A child logger per request only when a handler asks for one: most requests log one line.
    let child: Logger | undefined;
    const log = (): Logger => (child ??= logger.child({ reqId: requestId }));

    const finish = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      const payload = body === undefined ? '' : JSON.stringify(body);
      // Answers can carry tokens and private threads: never stored by a cache, never sniffed, never a referrer.
      const outHeaders: Record<string, string | number> = { 'x-request-id': requestId, ...API_HEADERS, ...headers };
      if (body !== undefined) {
        outHeaders['content-type'] = 'application/json; charset=utf-8';
        outHeaders['content-length'] = Buffer.byteLength(payload);
      }
      // A body still arriving is never read now: the connection cannot carry another request.
      if (!req.complete || deps.closing()) outHeaders.connection = 'close';
      res.writeHead(status, outHeaders);
      res.end(payload);
      const failed = status >= 500;
      if (!failed && !logger.isLevelEnabled('info')) return;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        reqId: requestId,
        method: req.method,
        path: pathname,
        status,
        ms: Math.round(ms * 100) / 100,
        ...fields,
      };
      if (failed) logger.error(line, 'request failed');
      else logger.info(line, 'request');
    };

    const run = async (): Promise<void> => {
      const match = router.match(req.method ?? 'GET', pathname);
      if (match === null) throw notFound(`no route ${req.method ?? ''} ${pathname}`);
      let caller: Promise<Authenticated> | undefined;
      let query: URLSearchParams | undefined;
      const ctx: RequestContext = {
        req,
        requestId,
        params: match.params,
        get query() {
          query ??= new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1));
          return query;
        },
        get log() {
          return log();
        },
        fields,
        caller: () => ctx.authenticated().then((a) => a.principal),
        authenticated: () => {
          caller ??= authenticateHeader(
            authenticate,
            req.headers.authorization,
            deps.clientAddress?.(req) ?? req.socket.remoteAddress,
          ).then((a) => {
            const { principal } = a;
            fields.principalId = principal.principalId;
            const key = budgetKeyOf(principal);
            const wait = deps.rateLimiter?.take(key) ?? 0;
            if (wait > 0) {
              const whose =
                key === principal.principalId
                  ? principal.principalId
                  : `${principal.principalId} (counted with ${key}, who created it)`;
              throw rateLimited(`too many requests from ${whose}; retry in ${wait} s`, wait);
            }
            return a;
          });
          return caller;
        },
        json: () => readJsonBody(req, LIMITS.maxRequestBytes),
      };
      const reply = await match.handler(ctx);
      finish(reply.status, reply.body);
    };

    run().catch((error: unknown) => {
      const response = toErrorResponse(error);
      if (response.status >= 500) logger.error({ reqId: requestId, err: error, ...fields }, 'unhandled error');
      if (res.headersSent) {
        res.destroy();
        return;
      }
      finish(response.status, response.body, response.headers);
    });
  };
}
