import { ARTIFACTS_EXTENSION } from '@bubble/protocol';

/**
 * Whether a `/v1/info` answer advertises exactly the artifacts extension this SDK speaks
 * (`extensions.artifacts.version === ARTIFACTS_EXTENSION.version`). Anything else, including a
 * missing, malformed or newer manifest, answers false. Pure; takes the raw JSON.
 */
export function artifactsManifestMatches(info: unknown): boolean {
  if (typeof info !== 'object' || info === null) return false;
  const extensions = (info as { extensions?: unknown }).extensions;
  if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return false;
  if (!Object.hasOwn(extensions, 'artifacts')) return false;
  const artifacts = (extensions as { artifacts?: unknown }).artifacts;
  if (typeof artifacts !== 'object' || artifacts === null || Array.isArray(artifacts)) return false;
  const version = (artifacts as { version?: unknown }).version;
  return typeof version === 'number' && version === ARTIFACTS_EXTENSION.version;
}
