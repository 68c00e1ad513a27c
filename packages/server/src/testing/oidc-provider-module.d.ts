/**
 * The little of `oidc-provider` (a devDependency with no type declarations of
 * its own) that `oidc-test-provider.ts` uses. Kept out of every exported type,
 * so the package's declarations never name it.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ProviderContext {
    oidc: { params?: Record<string, unknown> | undefined; route?: string | undefined };
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
  };
}
