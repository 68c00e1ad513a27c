import type { Artifact, ArtifactSummary } from '@bubble/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { BubbleClient } from '../api';
import { renderMarkdown } from '../markdown';
import type { PrincipalLabel } from '../model/who-is-who';
import { PrincipalName } from './principal-name';

/** The thread's artifacts, reloaded on every `artifact_updated`, each readable at any version. */
export function ArtifactsPanel(props: {
  client: BubbleClient;
  threadId: string;
  version: number;
  labelOf: (principalId: string) => PrincipalLabel;
}) {
  const { client, threadId } = props;
  const [list, setList] = useState<ArtifactSummary[] | null>(null);
  const [open, setOpen] = useState<{ name: string; version: number } | null>(null);
  const [artifact, setArtifact] = useState<Artifact | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    client.listArtifacts(threadId).then(setList, (err: unknown) => setError((err as Error).message));
  }, [client, threadId, props.version]);

  useEffect(() => {
    if (open === null) return;
    client
      .getArtifact(threadId, open.name, { version: open.version })
      .then(setArtifact, (err: unknown) => setError((err as Error).message));
  }, [client, threadId, open]);

  const latest = open ? list?.find((a) => a.name === open.name) : undefined;
  return (
    <aside class="panel" aria-label="Artifacts">
      <h2>Artifacts</h2>
      {error && <p class="error">{error}</p>}
      {list === null ? (
        <p role="status">Loading…</p>
      ) : list.length === 0 ? (
        <p class="meta">No artifacts yet.</p>
      ) : (
        <ul>
          {list.map((a) => (
            <li key={a.name}>
              <button type="button" class="link" onClick={() => setOpen({ name: a.name, version: a.version })}>
                {a.name}
              </button>{' '}
              <span class="meta">
                v{a.version} · <PrincipalName label={props.labelOf(a.updatedBy)} />
              </span>
            </li>
          ))}
        </ul>
      )}
      {open && latest && (
        <div class="artifact">
          <label for="artifact-version">Version of {open.name}</label>
          <select
            id="artifact-version"
            value={open.version}
            onChange={(e) => setOpen({ name: open.name, version: Number(e.currentTarget.value) })}
          >
            {Array.from({ length: latest.version }, (_, i) => latest.version - i).map((v) => (
              <option key={v} value={v}>
                version {v}
              </option>
            ))}
          </select>
          {artifact &&
            artifact.name === open.name &&
            artifact.version === open.version &&
            (artifact.mediaType === 'text/markdown' ? (
              <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(artifact.content) }} />
            ) : (
              <pre>{artifact.content}</pre>
            ))}
        </div>
      )}
    </aside>
  );
}
