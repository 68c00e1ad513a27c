import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildPrompt, promptText, threadName } from './message-prompt.js';

const logger = pino({ level: 'silent' });

describe('message prompts', () => {
  it('drops the bot mention, names other mentions and the sender', () => {
    expect(
      promptText(
        { content: '<@99> ask <@!5> about <@7>', senderName: 'Alice', mentions: [{ id: '5', name: 'Bob' }] },
        '99',
      ),
    ).toBe('Alice: ask @Bob about <@7>');
    expect(promptText({ content: '<@99>', senderName: 'Alice', mentions: [] }, '99')).toBe('Alice: (no text)');
  });

  it("names a thread after the first line, within Discord's 100 characters", () => {
    expect(threadName('<@99> how do I sort?\nmore', '99')).toBe('how do I sort?');
    expect(threadName('<@99>', '99')).toBe('Claude');
    expect(threadName('x'.repeat(200), '99').length).toBeLessThanOrEqual(100);
  });

  it('images become image blocks; too many, too large or unfetchable ones are named instead', async () => {
    const served = new Map([['http://cdn/a.png', Buffer.from('PNGDATA')]]);
    // A CDN in memory for this pure test; the e2e test (e2e-replies) fetches a real attachment over HTTP.
    const fetchStub = (async (url: string) =>
      served.has(url)
        ? new Response(served.get(url)!)
        : new Response('gone', { status: 404 })) as unknown as typeof fetch;
    const prompt = await buildPrompt(
      {
        content: 'look',
        senderName: 'Alice',
        mentions: [],
        attachments: [
          { url: 'http://cdn/a.png', name: 'a.png', contentType: 'image/png', size: 7 },
          { url: 'http://cdn/b.png', name: 'b.png', contentType: 'image/png', size: 7 },
          { url: 'http://cdn/big.jpg', name: 'big.jpg', contentType: 'image/jpeg', size: 10_000_000 },
          { url: 'http://cdn/doc.pdf', name: 'doc.pdf', contentType: 'application/pdf', size: 7 },
        ],
      },
      { botId: '99', maxImageBytes: 1_000_000, maxImages: 4, logger, fetch: fetchStub },
    );
    expect(Array.isArray(prompt)).toBe(true);
    const blocks = prompt as Array<{ type: string; text?: string; source?: { data: string } }>;
    expect(blocks[0]!.text).toContain('Alice: look');
    expect(blocks[0]!.text).toContain('b.png (could not be downloaded)');
    expect(blocks[0]!.text).toContain('big.jpg (over 1 MB)');
    expect(blocks.filter((b) => b.type === 'image')).toHaveLength(1);
    expect(blocks[1]!.source!.data).toBe(Buffer.from('PNGDATA').toString('base64'));
  });
});
