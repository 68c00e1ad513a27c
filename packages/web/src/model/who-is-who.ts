import type { Principal } from '@bubble/protocol';
import unhomoglyph from 'unhomoglyph';

/**
 * Who is who on a thread. Display names are free text and may collide (two people called Alice,
 * a bot named "Alice", or an "Аlice" spelt with a Cyrillic "А"): wherever two participants' names
 * are the same or confusable, each is shown with its principal id, which is unique. Bots always carry a badge, so a bot never passes for a person.
 */
export interface PrincipalLabel {
  readonly principalId: string;
  readonly displayName: string;
  readonly isBot: boolean;
  /** True when another participant's name is the same or looks the same: the id is shown beside it. */
  readonly showId: boolean;
  /** One line of text for places that cannot hold a badge ("Approved by Alice (alice-2)"). */
  readonly text: string;
}

/** A name as it is shown: Unicode-compatible forms folded (NFKC), invisible format characters dropped, spaces collapsed. */
function folded(displayName: string): string {
  return displayName
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/\s+/gu, ' ')
    .trim();
}

/**
 * The key two names collide on: Unicode-compatible forms folded (NFKC: full-width letters,
 * ligatures), case and surrounding or repeated spaces ignored, invisible format characters
 * (zero-width spaces and joiners, bidi marks) dropped. Names that only look alike in other
 * scripts (a Cyrillic "А") are caught by `skeleton`.
 */
export function nameKey(displayName: string): string {
  return folded(displayName).toLocaleLowerCase('en');
}

/**
 * Unicode's skeleton (UTS #39): the name decomposed, each character replaced by the prototype it
 * is confusable with (`unhomoglyph`, from Unicode's confusables.txt: Cyrillic "А" is "A", "I"
 * is "l", "rn" is "m"), decomposed again. Two names with one skeleton look alike.
 */
export function skeleton(displayName: string): string {
  return unhomoglyph(folded(displayName).normalize('NFD')).normalize('NFD');
}

/**
 * Every key a name collides on: the same name (`nameKey`), the same skeleton, and the same
 * skeleton whatever the case ("аlice" with a Cyrillic "а" beside "Alice").
 */
export function collisionKeys(displayName: string): string[] {
  const skel = skeleton(displayName);
  return [
    `name:${nameKey(displayName)}`,
    `skeleton:${skel}`,
    `skeleton-any-case:${skeleton(skel.toLocaleLowerCase('en')).toLocaleLowerCase('en')}`,
  ];
}

/** Labels for every principal of one thread; ids not among `principals` are labelled by their id. */
export function labelParticipants(
  principals: Iterable<Pick<Principal, 'principalId' | 'displayName' | 'kind'>>,
): ReadonlyMap<string, PrincipalLabel> {
  const byId = new Map<string, Pick<Principal, 'principalId' | 'displayName' | 'kind'>>();
  for (const p of principals) byId.set(p.principalId, p);
  // Who each key belongs to: every participant's name and id (a name that looks like someone
  // else's id collides too: "bob" shown by a bot, beside the person bob).
  const idsByKey = new Map<string, Set<string>>();
  const claim = (key: string, principalId: string) => {
    const ids = idsByKey.get(key) ?? new Set<string>();
    ids.add(principalId);
    idsByKey.set(key, ids);
  };
  const shownName = (p: Pick<Principal, 'principalId' | 'displayName'>) =>
    p.displayName.trim() === '' ? p.principalId : p.displayName;
  for (const p of byId.values()) {
    for (const key of collisionKeys(shownName(p))) claim(key, p.principalId);
    for (const key of collisionKeys(p.principalId)) claim(key, p.principalId);
  }
  const labels = new Map<string, PrincipalLabel>();
  for (const p of byId.values()) {
    const displayName = shownName(p);
    const showId =
      displayName !== p.principalId && collisionKeys(displayName).some((key) => (idsByKey.get(key)?.size ?? 0) > 1);
    labels.set(p.principalId, {
      principalId: p.principalId,
      displayName,
      isBot: p.kind === 'bot',
      showId,
      text: showId ? `${displayName} (${p.principalId})` : displayName,
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
