/**
 * The subset of the `ws` package's API that the sdk's live connection uses
 * (`on('open'|'message'|'error'|'close')`, `send`, `close`, `terminate`,
 * `readyState`, `WebSocket.OPEN`), over the browser's native WebSocket.
 *
 * `terminate()` reports the close at once (code 1006) and detaches, as `ws`
 * does for a dead link, instead of waiting for a closing handshake that a dead
 * link never finishes.
 */
type Listener = (...args: unknown[]) => void;

export default class BrowserWebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;

  readonly #socket: WebSocket;
  readonly #listeners = new Map<string, Listener[]>();
  #closed = false;

  constructor(url: string, _options?: unknown) {
    this.#socket = new WebSocket(url);
    this.#socket.addEventListener('open', () => this.#emit('open'));
    this.#socket.addEventListener('message', (e: MessageEvent) => {
      if (typeof e.data === 'string') this.#emit('message', e.data, false);
      else this.#emit('message', e.data, true);
    });
    this.#socket.addEventListener('error', () => this.#emit('error', new Error('WebSocket error')));
    this.#socket.addEventListener('close', (e: CloseEvent) => this.#closeOnce(e.code, e.reason));
  }

  get readyState(): number {
    return this.#closed ? BrowserWebSocket.CLOSED : this.#socket.readyState;
  }

  on(event: string, listener: Listener): this {
    const list = this.#listeners.get(event) ?? [];
    list.push(listener);
    this.#listeners.set(event, list);
    return this;
  }

  send(data: string): void {
    this.#socket.send(data);
  }

  close(code?: number, reason?: string): void {
    // Browsers accept only 1000 and 3000-4999 from scripts.
    const allowed = code === 1000 || (code !== undefined && code >= 3000 && code <= 4999);
    this.#socket.close(allowed ? code : 1000, reason);
  }

  terminate(): void {
    try {
      this.#socket.close();
    } catch {
      // already closed
    }
    this.#closeOnce(1006, '');
  }

  #closeOnce(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#emit('close', code, reason);
  }

  #emit(event: string, ...args: unknown[]): void {
    for (const listener of this.#listeners.get(event) ?? []) listener(...args);
  }
}
