/**
 * A server-to-client WebSocket text message as the bytes on the wire (RFC 6455 §5.2): one final
 * frame, opcode 1, unmasked (a server never masks), no extension bits. Pure.
 *
 * Why the server frames its own messages: one live event goes to many sockets, and `ws.send`
 * encodes and frames its text again for each of them (at 1,000 subscribers and 1,000 events/s
 * that was a third of the server's time, with the garbage it leaves). Encoded once, the same
 * bytes are queued on every socket and written as they are. This is valid only because the
 * sockets negotiate no extension (`perMessageDeflate: false` in `attach-websocket.ts`, so no
 * RSV1) and `ws` writes its own frames (pongs, close) to the socket at once rather than queueing
 * them, so whole frames from both never interleave mid-frame.
 */
export function encodeTextFrame(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81; // FIN + text
  if (length < 126) frame[1] = length;
  else if (length < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    // Messages are at most 1 MiB (LIMITS.maxFrameBytes), far below 2^32: the high word is 0.
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, header, length, 'utf8');
  return frame;
}
