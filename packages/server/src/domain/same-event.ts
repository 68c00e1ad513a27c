/**
 * Whether a retried event carries the same `type` and `data` as the stored one.
 * JSON object key order does not matter; array order does.
 */
export function isSameEvent(a: { type: string; data: unknown }, b: { type: string; data: unknown }): boolean {
  return a.type === b.type && deepEqualJson(a.data, b.data);
}

export function deepEqualJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqualJson(item, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && deepEqualJson(ao[k], bo[k]));
}
