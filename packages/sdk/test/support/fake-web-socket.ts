import { ClientFrameSchema, type ClientFrame, type EventEnvelope, type ServerFrame } from '@bubble/protocol';
import { expect } from 'vitest';
import type { WebSocketFactory, WebSocketLike, WebSocketListener } from '../../src/live/web-socket-like.js';

/**
 * A hand-written `WebSocketLike` for tests of `BubbleLive`: the server's side is played by the
 * test, frame by frame, so what the connection sends and when is exact. (Against the real server:
 * the slow-consumer, reconnect and subscription tests.)
 */
export class FakeSocket implements WebSocketLike {
  isOpen = false;
  readonly sent: ClientFrame[] = [];
  readonly flowCalls: string[] = [];
  flowControl: WebSocketLike['flowControl'];
  readonly #listener: WebSocketListener;

  constructor(listener: WebSocketListener, withFlowControl: boolean) {
    this.#listener = listener;
    if (withFlowControl)
      this.flowControl = { pause: () => this.flowCalls.push('pause'), resume: () => this.flowCalls.push('resume') };
  }

  send(text: string): void {
    // Every frame the connection sends must be one the protocol's client union accepts, unchanged.
    const json = JSON.parse(text) as unknown;
    expect(ClientFrameSchema.parse(json)).toEqual(json);
    this.sent.push(json as ClientFrame);
  }
  close(code: number, reason: string): void {
    this.isOpen = false;
    this.#listener.onClose(code, reason);
  }
  terminate(): void {
    this.close(1006, '');
  }

  // The server's side.
  open(): void {
    this.isOpen = true;
    this.#listener.onOpen();
  }
  push(frame: ServerFrame): void {
    this.#listener.onMessage({ kind: 'text', text: JSON.stringify(frame) });
  }
  drop(code: number, reason = ''): void {
    this.isOpen = false;
    this.#listener.onClose(code, reason);
  }
  ofType<T extends ClientFrame['type']>(type: T): Extract<ClientFrame, { type: T }>[] {
    return this.sent.filter((frame): frame is Extract<ClientFrame, { type: T }> => frame.type === type);
  }
}

export function fakeTransport(withFlowControl: boolean) {
  const sockets: FakeSocket[] = [];
  const factory: WebSocketFactory = (_url, listener) => {
    const socket = new FakeSocket(listener, withFlowControl);
    sockets.push(socket);
    return socket;
  };
  return { sockets, factory };
}

export const PRINCIPAL = {
  principalId: 'alice',
  kind: 'human' as const,
  displayName: 'Alice',
  ownerPrincipalIds: [],
  createdAt: '2026-11-29T10:00:00.000Z',
};

export function event(seq: number, threadId = 'th_1'): EventEnvelope {
  return {
    id: `ev_${seq}`,
    threadId,
    seq,
    type: 'test.note',
    principalId: 'alice',
    data: {},
    clientEventId: null,
    createdAt: '2026-11-29T10:00:00.000Z',
  };
}

export const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));
