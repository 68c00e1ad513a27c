import { z } from 'zod';
import { ArtifactNameSchema, MediaTypeSchema } from '@bubble/protocol';
import { callOptions, defineTool, type LocalTool } from './local-tool.js';
import { threadIdInput } from './thread-scope.js';

const threadIdField = threadIdInput(
  'This thread or one of its subthreads (no other); default: the thread this call comes from.',
);

export const ListArtifactsInputSchema = z.strictObject({ threadId: threadIdField });
export const ReadArtifactInputSchema = z.strictObject({
  name: ArtifactNameSchema.describe('The artifact name.'),
  version: z.number().int().positive().optional().describe('A version; default: the latest.'),
  threadId: threadIdField,
});
export const WriteArtifactInputSchema = z.strictObject({
  name: ArtifactNameSchema.describe('The artifact name, e.g. "report.md".'),
  content: z.string().describe('The whole new content.'),
  mediaType: MediaTypeSchema.default('text/markdown').describe('Default text/markdown.'),
  baseVersion: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      'The version you read and are replacing (0 for a new artifact); the write fails if someone wrote a newer one meanwhile.',
    ),
  threadId: threadIdField,
});

export const listArtifactsTool = defineTool({
  name: 'list_artifacts',
  description: 'List the artifacts (named, versioned documents) of this thread or of threadId.',
  inputSchema: ListArtifactsInputSchema,
  async handler(input, context) {
    const artifacts = await context.client.listArtifacts(input.threadId ?? context.threadId, callOptions(context));
    return { artifacts: artifacts.map((artifact) => ({ ...artifact })) };
  },
});

export const readArtifactTool = defineTool({
  name: 'read_artifact',
  description: 'Read an artifact of this thread (or of threadId): the latest version, or the one given.',
  inputSchema: ReadArtifactInputSchema,
  async handler(input, context) {
    const artifact = await context.client.getArtifact(
      input.threadId ?? context.threadId,
      input.name,
      input.version !== undefined ? { version: input.version } : {},
      callOptions(context),
    );
    return { artifact: { ...artifact } };
  },
});

export const writeArtifactTool = defineTool({
  name: 'write_artifact',
  description:
    'Write the next version of an artifact of this thread (or of threadId). Pass baseVersion (the version you read, 0 for a new one) ' +
    'so that a concurrent write is refused with a conflict instead of being overwritten.',
  inputSchema: WriteArtifactInputSchema,
  async handler(input, context) {
    const artifact = await context.client.putArtifact(
      input.threadId ?? context.threadId,
      input.name,
      {
        content: input.content,
        mediaType: input.mediaType,
        baseVersion: input.baseVersion,
      },
      callOptions(context),
    );
    return {
      name: artifact.name,
      version: artifact.version,
      mediaType: artifact.mediaType,
      size: artifact.size,
      updatedAt: artifact.updatedAt,
    };
  },
});

/** The artifacts extension's tools; registered only when the server's manifest matches. */
export const ARTIFACT_TOOLS: readonly LocalTool[] = Object.freeze([
  listArtifactsTool,
  readArtifactTool,
  writeArtifactTool,
] as LocalTool[]);
