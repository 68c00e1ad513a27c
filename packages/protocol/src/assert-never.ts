/**
 * The end of an exhaustive switch: the type checker proves `value` cannot exist, so a new variant
 * (an SDK upgrade, a new event type) fails the build instead of passing silently; at run time,
 * where input slipped past the types, it throws with what it saw.
 */
export function assertNever(value: never, context = 'value'): never {
  throw new Error(`unexpected ${context}: ${JSON.stringify(value) ?? String(value)}`);
}
