import type { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import * as wsModule from 'ws';
import { encodeTextFrame } from './ws-frame.js';

/** `ws`'s own frame parser, as a client reads what a server sends (the typings leave it out). */
const Receiver = (wsModule as unknown as { Receiver: new (options: { isServer: boolean }) => Writable }).Receiver;

function decode(bytes: Buffer): Promise<Array<{ text: string; isBinary: boolean }>> {
  const receiver = new Receiver({ isServer: false });
  const messages: Array<{ text: string; isBinary: boolean }> = [];
  receiver.on('message', (data: Buffer, isBinary: boolean) => messages.push({ text: data.toString('utf8'), isBinary }));
  return new Promise((resolve, reject) => {
    receiver.on('error', reject);
    receiver.write(bytes, () => resolve(messages));
  });
}

describe('encodeTextFrame', () => {
  it.each([
    ['empty', ''],
    ['short', '{"type":"pong"}'],
    ['125 bytes, the longest 7-bit length', 'a'.repeat(125)],
    ['126 bytes, the shortest 16-bit length', 'a'.repeat(126)],
    ['65,535 bytes, the longest 16-bit length', 'b'.repeat(65_535)],
    ['65,536 bytes, the shortest 64-bit length', 'c'.repeat(65_536)],
    ['multi-byte characters (length in bytes, not characters)', `{"delta":"${'é✓𝄞'.repeat(50)}"}`],
  ])('is one text message that ws reads back: %s', async (_name, text) => {
    const frame = encodeTextFrame(text);
    expect(frame[0]).toBe(0x81);
    expect(await decode(frame)).toEqual([{ text, isBinary: false }]);
  });

  it('frames back to back read as that many messages, in order', async () => {
    const texts = ['one', 'x'.repeat(300), 'three'];
    expect((await decode(Buffer.concat(texts.map(encodeTextFrame)))).map((m) => m.text)).toEqual(texts);
  });
});
