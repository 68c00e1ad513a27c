import { z } from 'zod';

/** A principal id: lowercase, 2 to 64 characters. */
export const PRINCIPAL_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{1,63}$/;
/** The principal that authors events the server writes itself. */
export const SYSTEM_PRINCIPAL_ID = 'system';
/** A subthread id: the parent's id, `.sub-`, then 5 and 3 lowercase alphanumerics. */
export const SUBTHREAD_ID_PATTERN = /^(.+)\.sub-[a-z0-9]{5}-[a-z0-9]{3}$/;
/** An artifact name. */
export const ARTIFACT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Local bearer token prefixes. */
export const TOKEN_PREFIXES = Object.freeze({ bot: 'bubble_agent_', human: 'bubble_user_' });

export const PrincipalIdSchema = z
  .string()
  .regex(
    PRINCIPAL_ID_PATTERN,
    'must match ^[a-z0-9][a-z0-9._-]{1,63}$ (lowercase letters, digits, ".", "_", "-"; 2 to 64 characters)',
  );

export const ThreadIdSchema = z.string().min(1).max(512);
export const ArtifactNameSchema = z
  .string()
  .regex(ARTIFACT_NAME_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
/** An ISO-8601 UTC timestamp as sent on the wire. */
export const TimestampSchema = z.string();
/**
 * A non-negative integer query parameter, written in plain decimal digits: `?after=12`.
 * `0x10`, `1e2`, ` 10` and an empty value are refused, not read as numbers.
 */
export const QueryIntSchema = z
  .string()
  .regex(/^[0-9]{1,15}$/, 'must be a non-negative integer in decimal digits')
  .transform(Number);
/** A per-thread sequence number: 1, 2, 3, … */
export const SeqSchema = z.number().int().nonnegative();
