/** JSON text of any value for people to read: never throws (cycles, BigInt fall back to String). */
export function stringifyForDisplay(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'undefined';
  } catch {
    return String(value);
  }
}
