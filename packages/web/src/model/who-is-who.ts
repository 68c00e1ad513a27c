import type { Principal } from '@bubble/protocol';

/**
 * Who is who on a thread. Display names are free text and may collide (two people called Alice,
 * or a bot named "Alice"): wherever two participants share one, each is shown with its principal
 * id, which is unique. Bots always carry a badge, so a bot never passes for a person.
 */
export interface PrincipalLabel {
  readonly principalId: string;
  readonly displayName: string;
  readonly isBot: boolean;
  /** True when another participant shows the same name: the id is shown beside it. */
  readonly showId: boolean;
  /** One line of text for places that cannot hold a badge ("Approved by Alice (alice-2)"). */
  readonly text: string;
}

/**
 * The key two names collide on: Unicode-compatible forms folded (NFKC: full-width letters,
 * ligatures), case and surrounding or repeated spaces ignored, invisible format characters
 * (zero-width spaces and joiners, bidi marks) dropped. Names that merely look alike in other
 * scripts (a Cyrillic "а") are not caught here; the badge and the People panel's ids are.
 */
export function nameKey(displayName: string): string {
  return displayName
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/\s+/gu, ' ')
    .trim()
    .toLocaleLowerCase('en');
}

/** Labels for every principal of one thread; ids not among `principals` are labelled by their id. */
export function labelParticipants(
  principals: Iterable<Pick<Principal, 'principalId' | 'displayName' | 'kind'>>,
): ReadonlyMap<string, PrincipalLabel> {
  const byId = new Map<string, Pick<Principal, 'principalId' | 'displayName' | 'kind'>>();
  for (const p of principals) byId.set(p.principalId, p);
  const idsByName = new Map<string, Set<string>>();
  for (const p of byId.values()) {
    const key = nameKey(p.displayName || p.principalId);
    const ids = idsByName.get(key) ?? new Set<string>();
    ids.add(p.principalId);
    idsByName.set(key, ids);
  }
  const labels = new Map<string, PrincipalLabel>();
  for (const p of byId.values()) {
    const displayName = p.displayName.trim() === '' ? p.principalId : p.displayName;
    // A name that is someone else's id collides too ("bob" shown by a bot, beside the person bob).
    const showId =
      (idsByName.get(nameKey(displayName))?.size ?? 0) > 1 ||
      (byId.has(nameKey(displayName)) && nameKey(displayName) !== p.principalId);
    labels.set(p.principalId, {
      principalId: p.principalId,
      displayName,
      isBot: p.kind === 'bot',
      showId: showId && displayName !== p.principalId,
      text: showId && displayName !== p.principalId ? `${displayName} (${p.principalId})` : displayName,
    });
  }
  return labels;
}

/** The label of `principalId`, or one made of the id alone while its principal is not known yet. */
export function labelOf(labels: ReadonlyMap<string, PrincipalLabel>, principalId: string): PrincipalLabel {
  return (
    labels.get(principalId) ?? { principalId, displayName: principalId, isBot: false, showId: false, text: principalId }
  );
}
