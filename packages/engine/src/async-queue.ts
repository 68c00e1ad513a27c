/**
 * A push/pull queue with one reader: the producer pushes without waiting, the
 * reader pulls and waits while the queue is empty. It is what sits between a
 * bot and the SDK in both directions: the streaming-input prompt the SDK pulls
 * (`PromptStream`) and the messages a `LiveQuery` hands its reader.
 *
 * The queue ends two ways. `end()`: nothing more comes, and the reader still
 * gets everything pushed before it. The reader leaving (`break`, `return()`):
 * what was left is dropped and later pushes are refused, so an owner that
 * needs to know can tell (`push` returns false).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  readonly #secondReader: () => Error;
  #waiter: ((result: IteratorResult<T>) => void) | undefined;
  #ended = false;
  #iterated = false;

  /** `secondReader` is the error thrown when the queue is iterated again (each owner names its own). */
  constructor(options: { secondReader: () => Error }) {
    this.#secondReader = options.secondReader;
  }

  /** True once `end()` was called or the reader left: nothing more is taken. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Items pushed that the reader has not pulled yet. */
  get size(): number {
    return this.#items.length;
  }

  /** Hands an item to the reader (at once when it waits); false, and nothing kept, once the queue has ended. */
  push(item: T): boolean {
    if (this.#ended) return false;
    const waiter = this.#waiter;
    if (waiter) {
      this.#waiter = undefined;
      waiter({ value: item, done: false });
    } else {
      this.#items.push(item);
    }
    return true;
  }

  /** Nothing more comes; the reader still gets what was pushed, then finishes. Idempotent. */
  end(): void {
    this.#ended = true;
    // A waiting reader means nothing is queued: it finishes now.
    this.#settleWaiter();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.#iterated) throw this.#secondReader();
    this.#iterated = true;
    return {
      next: () => {
        if (this.#items.length > 0) return Promise.resolve({ value: this.#items.shift() as T, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.#waiter = resolve;
        });
      },
      return: () => {
        this.#ended = true;
        this.#items.length = 0;
        this.#settleWaiter();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  #settleWaiter(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.({ value: undefined, done: true });
  }
}
