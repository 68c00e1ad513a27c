/**
 * A minimal WebSocket client on a raw TCP socket, for the fan-out benchmark's
 * receivers: it hands each text message's bytes to the caller without UTF-8
 * validation, event emitters or copies, so that 100 sockets x 1,000 events/s
 * in one process measure the server, not the client library.
 * Handles what a `ws` server sends: unfragmented text frames, close, ping.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface RawWsHandlers {
  onOpen(): void;
  onText(payload: Buffer): void;
  onClose(code: number): void;
}

export class RawWsClient {
  /**
   * Once set, `event` frames are only counted (in `events`), not handed to `onText`: no copy, no
   * allocation, for receivers that read every frame but time only some (fanout-subscribers.ts).
   */
  countEventsOnly = false;
  events = 0;
  readonly #socket: Socket;
  #buffer: Buffer = Buffer.alloc(0);
  #upgraded = false;
  #closed = false;
  readonly #handlers: RawWsHandlers;

  /** `localAddress`: connect from this address (another 127.x.y.z stands for another client). */
  constructor(url: string, handlers: RawWsHandlers, localAddress?: string) {
    this.#handlers = handlers;
    const target = new URL(url);
    this.#socket = connect({
      host: target.hostname,
      port: Number(target.port),
      ...(localAddress === undefined ? {} : { localAddress }),
    });
    this.#socket.setNoDelay(true);
    this.#socket.on('connect', () => {
      this.#socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    this.#socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#socket.on('error', () => this.#finish(1006));
    this.#socket.on('close', () => this.#finish(1006));
  }

  sendText(text: string): void {
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    const length = payload.length;
    const header = length < 126 ? Buffer.alloc(2) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    header[0] = 0x81;
    if (length < 126) header[1] = 0x80 | length;
    else if (length < 65536) {
      header[1] = 0x80 | 126;
      header.writeUInt16BE(length, 2);
    } else {
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
    for (let i = 0; i < length; i += 1) payload[i] = (payload[i] as number) ^ (mask[i & 3] as number);
    this.#socket.write(Buffer.concat([header, mask, payload]));
  }

  destroy(): void {
    this.#closed = true;
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    if (!this.#upgraded) {
      const end = this.#buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = this.#buffer.toString('latin1', 9, 12);
      if (status !== '101') {
        this.#finish(1002);
        return;
      }
      this.#upgraded = true;
      this.#buffer = this.#buffer.subarray(end + 4);
      this.#handlers.onOpen();
    }
    let offset = 0;
    const buffer = this.#buffer;
    while (buffer.length - offset >= 2) {
      const opcode = (buffer[offset] as number) & 0x0f;
      let length = (buffer[offset + 1] as number) & 0x7f;
      let start = offset + 2;
      if (length === 126) {
        if (buffer.length - offset < 4) break;
        length = buffer.readUInt16BE(offset + 2);
        start = offset + 4;
      } else if (length === 127) {
        if (buffer.length - offset < 10) break;
        length = Number(buffer.readBigUInt64BE(offset + 2));
        start = offset + 10;
      }
      if (buffer.length < start + length) break;
      offset = start + length;
      // `{"type":"event"…`: the only server frame type starting "ev" (bytes 9 and 10).
      if (opcode === 0x1 && this.countEventsOnly && buffer[start + 9] === 0x65 && buffer[start + 10] === 0x76) {
        this.events += 1;
        continue;
      }
      const payload = buffer.subarray(start, start + length);
      if (opcode === 0x1) this.#handlers.onText(payload);
      else if (opcode === 0x8) {
        this.#finish(payload.length >= 2 ? payload.readUInt16BE(0) : 1005);
        this.#socket.end();
        return;
      }
    }
    this.#buffer = offset === buffer.length ? Buffer.alloc(0) : buffer.subarray(offset);
  }

  #finish(code: number): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#handlers.onClose(code);
  }
}
