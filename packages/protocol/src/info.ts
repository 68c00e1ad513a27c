import { z } from 'zod';

export const PROTOCOL_VERSION = 1;
/** The artifacts extension manifest this protocol package describes. */
export const ARTIFACTS_EXTENSION = Object.freeze({ version: 1 });

/**
 * `auth.oidc` of `GET /v1/info`, present only where the server is configured with an issuer:
 * what a browser needs to sign a person in (Authorization Code with PKCE) and send the access
 * token as the bearer. `audience` is the API the access token must be issued for (Auth0's
 * `audience` parameter; a JWT's `aud`).
 */
export const OidcInfoSchema = z.object({
  issuer: z.string().min(1),
  clientId: z.string().min(1),
  audience: z.string().min(1),
});
export type OidcInfo = z.infer<typeof OidcInfoSchema>;

export const InfoSchema = z.object({
  name: z.literal('bubble'),
  version: z.string(),
  protocol: z.number().int(),
  /** Absent where the server accepts local tokens only. */
  auth: z.object({ oidc: OidcInfoSchema.optional() }).optional(),
  extensions: z.record(z.string(), z.looseObject({ version: z.number().int() })),
});
export type Info = z.infer<typeof InfoSchema>;

export const HealthSchema = z.object({ ok: z.boolean() });
