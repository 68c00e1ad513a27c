/** `node:crypto` as far as the sdk uses it, in the browser. */
export function randomUUID(): string {
  return globalThis.crypto.randomUUID();
}
