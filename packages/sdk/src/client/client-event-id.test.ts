import { describe, expect, it } from 'vitest';
import { newClientEventId, withClientEventIds } from './client-event-id.js';

describe('withClientEventIds', () => {
  it('keys only the events that have no clientEventId, without touching the input', () => {
    const input = [
      { type: 'a.b', data: {} },
      { type: 'a.b', data: {}, clientEventId: 'mine' },
    ];
    let n = 0;
    const keyed = withClientEventIds(input, () => `k${(n += 1)}`);
    expect(keyed.map((e) => e.clientEventId)).toEqual(['k1', 'mine']);
    expect(input[0]).not.toHaveProperty('clientEventId');
  });

  it('makes distinct random ids', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newClientEventId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^ce_[0-9a-f-]{36}$/);
  });
});
