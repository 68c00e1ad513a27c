import { z } from 'zod';

export const PROTOCOL_VERSION = 1;
/** The artifacts extension manifest this protocol package describes. */
export const ARTIFACTS_EXTENSION = Object.freeze({ version: 1 });

export const InfoSchema = z.object({
  name: z.literal('bubble'),
  version: z.string(),
  protocol: z.number().int(),
  extensions: z.record(z.string(), z.looseObject({ version: z.number().int() })),
});
export type Info = z.infer<typeof InfoSchema>;

export const HealthSchema = z.object({ ok: z.boolean() });
