import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Heartbeat } from './heartbeat.js';

describe('Heartbeat', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function setup() {
    const calls = { pings: 0, dead: 0 };
    const heartbeat = new Heartbeat(
      1_000,
      500,
      () => (calls.pings += 1),
      () => (calls.dead += 1),
    );
    return { heartbeat, calls };
  }

  it('declares the link dead when nothing arrives after a ping', () => {
    const { heartbeat, calls } = setup();
    heartbeat.start();
    vi.advanceTimersByTime(1_000);
    expect(calls).toEqual({ pings: 1, dead: 0 });
    vi.advanceTimersByTime(500);
    expect(calls).toEqual({ pings: 1, dead: 1 });
    heartbeat.stop();
  });

  it('any frame after the ping keeps the link alive', () => {
    const { heartbeat, calls } = setup();
    heartbeat.start();
    vi.advanceTimersByTime(1_000);
    for (let round = 0; round < 5; round += 1) {
      // A frame arrives right after each ping; each verdict then finds the link alive.
      heartbeat.seen();
      vi.advanceTimersByTime(1_000);
    }
    expect(calls).toEqual({ pings: 6, dead: 0 });
    heartbeat.stop();
  });

  it('stop cancels a pending verdict', () => {
    const { heartbeat, calls } = setup();
    heartbeat.start();
    vi.advanceTimersByTime(1_000);
    heartbeat.stop();
    vi.advanceTimersByTime(10_000);
    expect(calls).toEqual({ pings: 1, dead: 0 });
  });
});
