import type { IncomingMessage } from 'node:http';
import type { Principal } from '@bubble/protocol';
import type { Logger } from 'pino';
import type { Authenticated } from '../services/auth-service.js';

/** Fields every request's log line carries, filled in as they become known. */
export interface LogFields {
  principalId?: string;
  threadId?: string;
  seq?: number | [number, number];
}

export interface RequestContext {
  readonly req: IncomingMessage;
  readonly requestId: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly log: Logger;
  readonly fields: LogFields;
  /** The authenticated caller; throws 401. */
  caller(): Promise<Principal>;
  /** The caller and the credential it used (the local token's id, or null for a JWT); throws 401. */
  authenticated(): Promise<Authenticated>;
  /** The parsed JSON body (at most 1 MiB); throws 400 or 413. */
  json(): Promise<unknown>;
}

export interface Reply {
  status: number;
  body?: unknown;
}

export type Handler = (ctx: RequestContext) => Promise<Reply>;
