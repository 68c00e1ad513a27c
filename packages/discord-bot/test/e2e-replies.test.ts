/** Streaming replies: growth by edits, the 2,000-character split around code, 429s, failed edits, images, errors. */
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ALICE_TOKEN, startHarness, type Harness } from './support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Whether every code fence opened in the text is closed in it. */
function fencesBalanced(text: string): boolean {
  let open: string | undefined;
  for (const line of text.split('\n')) {
    const match = FENCE.exec(line);
    if (match === null) continue;
    if (open === undefined) open = match[1];
    else if (match[1]!.startsWith(open[0]!) && match[1]!.length >= open.length && line.trim() === match[1])
      open = undefined;
  }
  return open === undefined;
}

describe('replies', () => {
  it('splits a long reply at 2,000 characters on line boundaries, closing and reopening a code block it has to cut', async () => {
    const prose = Array.from(
      { length: 12 },
      (_, i) => `Paragraph ${i + 1}: ${'words and more words '.repeat(5).trim()}.`,
    ).join('\n\n');
    const code = Array.from({ length: 90 }, (_, i) => `const value${i} = compute(${i}); // line ${i}`).join('\n');
    const text = `${prose}\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat is all.`;
    h = await startHarness({ script: [{ reply: [{ type: 'text', text, chunkChars: 400 }] }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'write a lot');
    expect(await h.settled(message)).toBe('✅');
    const parts = h.botMessages(threadId).map((m) => m.content);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(2000);
      expect(fencesBalanced(part)).toBe(true);
    }
    // Every code line arrived once, in order, and the code block was reopened with its language.
    const joined = parts.join('\n');
    const codeLines = joined.split('\n').filter((line) => line.startsWith('const value'));
    expect(codeLines).toEqual(code.split('\n'));
    expect(parts.filter((p) => p.includes('```ts')).length).toBeGreaterThanOrEqual(2);
    expect(joined).toContain('That is all.');
    expect(joined).toContain('Paragraph 12');
  });

  it('an edit answered 429 is retried after Retry-After; an edit that fails sends the text as a new message', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `word${i + 1}`).join(' ');
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: words, delayMs: 60 }] }] });
    await h.link(ALICE, ALICE_TOKEN);
    const edit = { method: 'PATCH', path: /^\/channels\/\d+\/messages\/\d+$/ };
    h.discord.rateLimitNext(edit, { retryAfterMs: 400 });
    const { message, threadId } = await h.mention(ALICE, 'count');
    const patches = () => h!.discord.rest.filter((r) => r.method === 'PATCH');
    const limited = await h.discord.waitFor(() => patches().find((r) => r.status === 429), { label: 'the 429' });
    const retried = await h.discord.waitFor(() => patches().find((r) => r.status === 200 && r.at > limited.at), {
      label: 'the retry',
    });
    expect(retried.at - limited.at).toBeGreaterThanOrEqual(350);
    // Then the message is deleted under the bot: its next edit fails for good.
    h.discord.failNext(edit, { status: 404, code: 10008, message: 'Unknown Message' });
    expect(await h.settled(message)).toBe('✅');
    expect(patches().filter((r) => r.status === 404)).toHaveLength(1);
    // Nothing lost: the message sent instead holds the whole text.
    expect(h.botMessages(threadId).length).toBeGreaterThanOrEqual(2);
    expect(h.botMessages(threadId).at(-1)!.content).toBe(words);
  });

  it("Claude's text pings nobody but the sender: @everyone, @here and roles are not parsed", async () => {
    h = await startHarness({
      script: [{ reply: [{ type: 'text', text: 'Hey @everyone and @here, <@&777> and <@2002>: <@2001> asked.' }] }],
    });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'ping them all');
    expect(await h.settled(message)).toBe('✅');
    const writes = h.discord.rest.filter(
      (r) => (r.method === 'POST' || r.method === 'PATCH') && r.path.startsWith(`/channels/${threadId}/messages`),
    );
    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes) {
      const allowed = (write.body as { allowed_mentions?: { parse?: string[]; users?: string[]; roles?: string[] } })
        .allowed_mentions;
      expect(allowed).toBeDefined();
      expect(allowed!.parse ?? []).toEqual([]);
      expect(allowed!.users).toEqual([ALICE.id]);
      expect(allowed!.roles ?? []).toEqual([]);
    }
  });

  it('an image attachment becomes an image block in the prompt', async () => {
    // A 1x1 PNG.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
      'base64',
    );
    h = await startHarness({ script: [{ reply: [{ type: 'text', text: 'a tiny image' }] }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message } = await h.mention(ALICE, 'what is in this picture?', {
      attachments: [{ filename: 'dot.png', contentType: 'image/png', data: png }],
    });
    expect(await h.settled(message)).toBe('✅');
    const body = h.mainRequests()[0]!.body as {
      messages: Array<{
        role: string;
        content: Array<{ type: string; source?: { data: string; media_type: string } }>;
      }>;
    };
    const blocks = body.messages
      .filter((m) => m.role === 'user')
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const image = blocks.find((b) => b.type === 'image');
    expect(image?.source?.media_type).toBe('image/png');
    expect(image?.source?.data).toBe(png.toString('base64'));
  });

  it('typing is shown while the reply runs and sent again while it lasts', async () => {
    h = await startHarness({ script: [{ delayMs: 9_000, reply: [{ type: 'text', text: 'slow answer' }] }] });
    await h.link(ALICE, ALICE_TOKEN);
    const { message, threadId } = await h.mention(ALICE, 'take your time');
    expect(await h.settled(message)).toBe('✅');
    const typing = h.discord.typing(threadId);
    expect(typing.length).toBeGreaterThanOrEqual(2);
    expect(typing[1]! - typing[0]!).toBeGreaterThanOrEqual(7_500);
  }, 40_000);
});
