import type { PrincipalLabel } from '../model/who-is-who';

/** A hue from the id (not the name, FNV-1a), so two people who share a name still look apart. */
export function avatarHue(principalId: string): number {
  let hash = 0x811c9dc5;
  for (const ch of principalId) hash = Math.imul(hash ^ ch.codePointAt(0)!, 0x01000193) >>> 0;
  return hash % 360;
}

/**
 * How many avatar colours there are (`--avatar-0` … in `styles/tokens.css`): a fixed palette
 * rather than any hue, so white initials meet 4.5:1 on every one of them (the contrast test
 * checks each), which a yellow or a cyan at the same lightness would not.
 */
export const AVATAR_COLOURS = 12;

export function avatarColour(principalId: string): number {
  return Math.floor((avatarHue(principalId) / 360) * AVATAR_COLOURS);
}

export function initials(displayName: string): string {
  const words = displayName
    .trim()
    .split(/\s+/u)
    .filter((w) => w !== '');
  const letters = words.length >= 2 ? [words[0]!, words[words.length - 1]!] : words.slice(0, 1);
  return letters.map((w) => [...w][0]!.toLocaleUpperCase()).join('') || '?';
}

/** A round avatar for a person, a square one for a bot: the shape tells them apart before the badge does. */
export function Avatar(props: { label: PrincipalLabel; size?: 'small' | 'normal' }) {
  const { label } = props;
  return (
    <span
      class={`avatar avatar-c${avatarColour(label.principalId)} ${label.isBot ? 'avatar-bot' : 'avatar-human'} ${props.size === 'small' ? 'avatar-small' : ''}`}
      aria-hidden="true"
    >
      {initials(label.displayName)}
    </span>
  );
}

/** A name as shown everywhere: a badge on a bot, and the id when another participant has the same name. */
export function PrincipalName(props: { label: PrincipalLabel; alwaysId?: boolean; strong?: boolean }) {
  const { label } = props;
  const Name = props.strong === true ? 'strong' : 'span';
  const showId = props.alwaysId === true ? label.displayName !== label.principalId : label.showId;
  return (
    <span class="principal" data-principal-id={label.principalId}>
      <Name class="principal-name">{label.displayName}</Name>
      {label.isBot && (
        <span class="bot-badge" title="A bot: it acts, and spends, for its owners">
          bot
        </span>
      )}
      {showId && (
        <span
          class="principal-id"
          title={label.showId ? 'Shown because another participant has a name that looks the same' : 'Principal id'}
        >
          {label.principalId}
        </span>
      )}
    </span>
  );
}
