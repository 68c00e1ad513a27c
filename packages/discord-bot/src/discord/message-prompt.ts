import type { UserContent } from '@bubble/engine';
import type { Logger } from 'pino';

/** The parts of a Discord message a prompt is made from (a discord.js Message fits). */
export interface PromptSource {
  content: string;
  /** The sender's Discord id: the only thing that says who speaks. */
  senderId: string;
  senderName: string;
  /** Users mentioned in the text, to show `@name` instead of `<@id>`. */
  mentions: ReadonlyArray<{ id: string; name: string }>;
  attachments: ReadonlyArray<{ url: string; name: string; contentType: string | null; size: number }>;
}

type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
type PromptBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: ImageMediaType; data: string } };

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Text as XML character data or attribute value: `&`, `<`, `>` and `"` escaped, so nothing inside can close the element. Pure. */
export function escapeMarkup(text: string): string {
  return text.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
}

/**
 * One message as Claude sees it: `<message from="discord:<id>" name="…">…</message>`.
 * The id says who speaks; the name and the text are escaped (line breaks in a
 * name too), so no display name and no text can close the element or fake
 * another speaker (issue 28 §8). Pure.
 */
export function speakerMessage(input: { senderId: string; senderName: string; text: string }): string {
  const name = escapeMarkup(input.senderName).replace(/[\r\n\t]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<message from="discord:${escapeMarkup(input.senderId)}" name="${name}">${escapeMarkup(input.text)}</message>`;
}

/**
 * The message for Claude: the bot's own mention dropped, other mentions as `@name`, wrapped with its sender
 * (threads are shared); `note` (what was left out) goes inside, escaped like the text. Pure.
 */
export function promptText(
  source: Pick<PromptSource, 'content' | 'senderId' | 'senderName' | 'mentions'>,
  botId: string,
  note = '',
): string {
  const names = new Map(source.mentions.map((m) => [m.id, m.name]));
  const text = source.content
    .replace(new RegExp(`<@!?${botId}>`, 'g'), '')
    .replace(/<@!?(\d+)>/g, (whole, id: string) => (names.has(id) ? `@${names.get(id)}` : whole))
    .trim();
  return speakerMessage({
    senderId: source.senderId,
    senderName: source.senderName,
    text: (text === '' ? '(no text)' : text) + note,
  });
}

/** A thread name from the first line of the message (Discord allows 100 characters). Pure. */
export function threadName(content: string, botId: string): string {
  const first =
    content
      .replace(new RegExp(`<@!?${botId}>`, 'g'), '')
      .trim()
      .split('\n')[0]
      ?.trim() ?? '';
  if (first === '') return 'Claude';
  return first.length > 90 ? `${first.slice(0, 89)}…` : first;
}

/**
 * The prompt: plain text, or content blocks when the message carries images
 * (each becomes an image block; seed 004 "Images"). Images over the size
 * limit, of other types, or that cannot be fetched are named in the text
 * instead, so Claude can say it did not see them.
 */
export async function buildPrompt(
  source: PromptSource,
  options: { botId: string; maxImageBytes: number; maxImages: number; logger: Logger; fetch?: typeof fetch },
): Promise<UserContent> {
  const images = source.attachments.filter(
    (a) => a.contentType !== null && IMAGE_TYPES.has(a.contentType.split(';')[0]!.trim()),
  );
  if (images.length === 0) return promptText(source, options.botId);
  const doFetch = options.fetch ?? fetch;
  const blocks: PromptBlock[] = [];
  const skipped: string[] = [];
  for (const [index, image] of images.entries()) {
    if (index >= options.maxImages) {
      skipped.push(`${image.name} (more than ${options.maxImages} images)`);
      continue;
    }
    if (image.size > options.maxImageBytes) {
      skipped.push(`${image.name} (over ${Math.round(options.maxImageBytes / 1024 / 1024)} MB)`);
      continue;
    }
    try {
      const response = await doFetch(image.url, { signal: AbortSignal.timeout(15_000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length > options.maxImageBytes) throw new Error('larger than announced');
      const mediaType = image.contentType!.split(';')[0]!.trim() as ImageMediaType;
      blocks.push({ type: 'image', source: { type: 'base64', media_type: mediaType, data: bytes.toString('base64') } });
    } catch (error) {
      options.logger.warn({ err: error, attachment: image.name }, 'could not fetch an image attachment');
      skipped.push(`${image.name} (could not be downloaded)`);
    }
  }
  const note = skipped.length === 0 ? '' : `\n[Images not included: ${skipped.join(', ')}]`;
  blocks.unshift({ type: 'text', text: promptText(source, options.botId, note) });
  return blocks as UserContent;
}
