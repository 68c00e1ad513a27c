import { describe, expect, it } from 'vitest';
import { combinedState } from './combined-state.js';
import type { LiveState } from './live-options.js';

describe('combinedState', () => {
  it.each<[LiveState[], LiveState]>([
    [[], 'idle'],
    [['idle', 'idle'], 'idle'],
    [['ready'], 'ready'],
    [['ready', 'idle'], 'ready'],
    [['ready', 'connecting'], 'connecting'],
    [['connecting', 'waiting', 'ready'], 'waiting'],
    [['waiting', 'failed'], 'failed'],
  ])('%j -> %s', (states, combined) => {
    expect(combinedState(states)).toBe(combined);
  });
});
