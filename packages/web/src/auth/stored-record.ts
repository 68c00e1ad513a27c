/** A JSON object read back from storage (input from outside), or null for anything that is not one. */
export function parseStoredRecord(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
