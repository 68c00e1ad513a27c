/**
 * How a bot's prompt quotes who said what. Pure.
 *
 * Every message is its own text block, and every block begins with its speaker's principal id
 * (`alice: …`), also when one person speaks. Ids are Bubble's (`^[a-z0-9][a-z0-9._-]{1,63}$`): no
 * text chooses them. A display name, when there is one and it differs from the id, follows the id
 * as one JSON string with every line break, control and format character escaped
 * (`alice ("Alice Liddell"): …`). Every later line of a message is indented by two spaces
 * (`CONTINUATION`), so only a label ever starts at the margin: neither a message nor a name can start
 * a line or a block that reads as someone else's, also where the blocks are joined into one text
 * (`formatDrainText`). A message that begins with `/` is never taken as a CLI slash command
 * (engine-notes §10): no block begins with the message itself.
 */

/** One message to quote: who wrote it and what they wrote. */
export interface SpokenPart {
  readonly principalId: string;
  /** Shown after the id when given and different from it. */
  readonly displayName?: string | undefined;
  readonly text: string;
}

/** A text content block, as the Anthropic Messages API (and ACP) take it. */
export interface PromptTextBlock {
  readonly type: 'text';
  readonly text: string;
}

/** Characters JSON leaves as they are that still break or disguise a line: C1 controls, format characters (bidi overrides, zero-widths), line and paragraph separators. */
const UNSAFE_IN_JSON = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/** `value` as a JSON string on one line: JSON's escapes, plus `\uXXXX` for every character in `UNSAFE_IN_JSON`. */
export function jsonOneLine(value: string): string {
  return JSON.stringify(value).replace(UNSAFE_IN_JSON, (char) =>
    [...Array(char.length).keys()]
      .map((index) => `\\u${char.charCodeAt(index).toString(16).padStart(4, '0')}`)
      .join(''),
  );
}

/** Who is speaking, as a block begins: the id, then the display name as a one-line JSON string. */
export function speakerLabel(principalId: string, displayName?: string): string {
  return displayName === undefined || displayName === '' || displayName === principalId
    ? principalId
    : `${principalId} (${jsonOneLine(displayName)})`;
}

/** What every line of a message after its first begins with. */
export const CONTINUATION = '  ';
/** Every way a text can end a line (JS, Unicode, or a terminal's reading); `\r\n` counts once. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;

/**
 * One message as its block's text: `alice: …` or `alice ("Alice"): …`, each later line indented by
 * `CONTINUATION` (line breaks become `\n`).
 */
export function quoteSpeaker(part: SpokenPart): string {
  return `${speakerLabel(part.principalId, part.displayName)}: ${part.text.replace(LINE_BREAK, `\n${CONTINUATION}`)}`;
}

/** The prompt's content: one text block per message, in order, each beginning with its speaker's id. */
export function promptBlocks(parts: readonly SpokenPart[]): PromptTextBlock[] {
  return parts.map((part) => ({ type: 'text', text: quoteSpeaker(part) }));
}
