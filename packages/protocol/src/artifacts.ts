import { z } from 'zod';
import { ArtifactNameSchema, QueryIntSchema, TimestampSchema } from './ids.js';

export const ArtifactSummarySchema = z.object({
  name: ArtifactNameSchema,
  version: z.number().int().positive(),
  mediaType: z.string(),
  updatedBy: z.string(),
  updatedAt: TimestampSchema,
  /** Size of the content in bytes (UTF-8). */
  size: z.number().int().nonnegative(),
});
export type ArtifactSummary = z.infer<typeof ArtifactSummarySchema>;

export const ArtifactSchema = ArtifactSummarySchema.extend({ content: z.string() });
export type Artifact = z.infer<typeof ArtifactSchema>;

export const MediaTypeSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/, 'must be a media type such as text/markdown');

export const PutArtifactRequestSchema = z.object({
  content: z.string(),
  mediaType: MediaTypeSchema,
  baseVersion: z.number().int().nonnegative().optional(),
});
export type PutArtifactRequest = z.infer<typeof PutArtifactRequestSchema>;

export const ArtifactQuerySchema = z.object({ version: QueryIntSchema.pipe(z.number().min(1)).optional() });

export const ArtifactListResponseSchema = z.object({ artifacts: z.array(ArtifactSummarySchema) });
export const ArtifactResponseSchema = z.object({ artifact: ArtifactSchema });
