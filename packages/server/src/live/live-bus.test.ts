import { describe, expect, it } from 'vitest';
import { createLiveBus, type LiveBusMessage } from './live-bus.js';

const msg = (principalId: string): LiveBusMessage => ({ kind: 'tokens_revoked', principalId, tokenIds: ['tok_1'] });

describe('createLiveBus', () => {
  it('delivers every message to every listener in publish order', () => {
    const bus = createLiveBus();
    const a: string[] = [];
    const b: string[] = [];
    bus.subscribe((m) => a.push(m.kind === 'tokens_revoked' ? m.principalId : '?'));
    bus.subscribe((m) => b.push(m.kind === 'tokens_revoked' ? m.principalId : '?'));
    bus.publish(msg('p1'));
    bus.publish(msg('p2'));
    expect(a).toEqual(['p1', 'p2']);
    expect(b).toEqual(['p1', 'p2']);
  });

  it('stops delivering after unsubscribe', () => {
    const bus = createLiveBus();
    const seen: LiveBusMessage[] = [];
    const off = bus.subscribe((m) => seen.push(m));
    bus.publish(msg('p1'));
    off();
    bus.publish(msg('p2'));
    expect(seen).toHaveLength(1);
  });

  it('keeps delivering to others when a listener throws, and reports the error', () => {
    const errors: unknown[] = [];
    const bus = createLiveBus({ onListenerError: (e) => errors.push(e) });
    const seen: LiveBusMessage[] = [];
    bus.subscribe(() => {
      throw new Error('boom');
    });
    bus.subscribe((m) => seen.push(m));
    bus.publish(msg('p1'));
    expect(seen).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  it('treats the same function subscribed twice as two subscriptions', () => {
    const bus = createLiveBus();
    let count = 0;
    const listener = (): void => {
      count += 1;
    };
    const off1 = bus.subscribe(listener);
    bus.subscribe(listener);
    off1();
    bus.publish(msg('p1'));
    expect(count).toBe(1);
  });
});
