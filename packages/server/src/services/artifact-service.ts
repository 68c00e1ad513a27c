import { LIMITS, type Artifact, type ArtifactSummary, type Principal, type PutArtifactRequest } from '@bubble/protocol';
import { notFound, payloadTooLarge } from '../errors/bubble-error.js';
import { requireParticipant, requireReader } from '../domain/access-rules.js';
import type { BubbleStore } from '../store/store.js';

export function createArtifactService(store: BubbleStore) {
  return {
    async list(caller: Principal, threadId: string): Promise<ArtifactSummary[]> {
      requireReader(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      return store.listArtifacts(threadId);
    },

    async get(caller: Principal, threadId: string, name: string, version?: number): Promise<Artifact> {
      requireReader(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      const artifact = await store.getArtifact(threadId, name, version);
      if (artifact === null) {
        throw notFound(
          version === undefined ? `artifact ${name} not found` : `artifact ${name} version ${version} not found`,
        );
      }
      return artifact;
    },

    /** Writes version n+1 (409 when `baseVersion` is given and not the latest) and appends `artifact_updated`. */
    async put(caller: Principal, threadId: string, name: string, input: PutArtifactRequest): Promise<ArtifactSummary> {
      requireParticipant(await store.getThreadAccess(threadId, caller.principalId), threadId, caller.principalId);
      const bytes = Buffer.byteLength(input.content, 'utf8');
      if (bytes > LIMITS.maxArtifactBytes) {
        throw payloadTooLarge(`artifact content is ${bytes} bytes; the limit is ${LIMITS.maxArtifactBytes}`);
      }
      const { content: _content, ...summary } = await store.putArtifact({
        threadId,
        name,
        content: input.content,
        mediaType: input.mediaType,
        baseVersion: input.baseVersion,
        by: caller.principalId,
      });
      return summary;
    },
  };
}

export type ArtifactService = ReturnType<typeof createArtifactService>;
