import { describe, expect, it } from 'vitest';
import { PresenceRegistry, presencePair } from './presence-registry.js';

function recording() {
  const registry = new PresenceRegistry();
  const changes: string[] = [];
  const local: string[] = [];
  registry.onChange((principalId, online) => changes.push(`${principalId}:${online ? 'on' : 'off'}`));
  registry.onLocalChange((principalId, online) => local.push(`${principalId}:${online ? 'on' : 'off'}`));
  return { registry, changes, local };
}

describe('PresenceRegistry', () => {
  it('is online while this instance or any other has the principal, and tells each change of that once', () => {
    const { registry, changes, local } = recording();
    registry.setLocal('bot', true);
    registry.setRemote('inst_b', 'bot', true);
    registry.setLocal('bot', false);
    expect(registry.isOnline('bot')).toBe(true);
    registry.setRemote('inst_c', 'bot', true);
    registry.setRemote('inst_b', 'bot', false);
    registry.setRemote('inst_c', 'bot', false);
    expect(registry.isOnline('bot')).toBe(false);
    expect(changes).toEqual(['bot:on', 'bot:off']);
    // What the other instances must hear: this instance's own changes only.
    expect(local).toEqual(['bot:on', 'bot:off']);
  });

  it('ignores repeats: a second "online" from the same place, an "offline" from where it never was', () => {
    const { registry, changes, local } = recording();
    registry.setLocal('bot', false);
    registry.setRemote('inst_b', 'bot', false);
    registry.setLocal('bot', true);
    registry.setLocal('bot', true);
    registry.setRemote('inst_b', 'bot', true);
    registry.setRemote('inst_b', 'bot', true);
    expect(changes).toEqual(['bot:on']);
    expect(local).toEqual(['bot:on']);
    expect(registry.localPrincipals()).toEqual(['bot']);
  });

  it('replaces what it holds of the other instances with a read, telling only what changed', () => {
    const { registry, changes } = recording();
    registry.setRemote('inst_b', 'gone', true);
    registry.setRemote('inst_b', 'stays', true);
    registry.setLocal('here', true);
    changes.length = 0;
    registry.replaceRemote(
      new Map([
        ['stays', new Set(['inst_c'])],
        ['new', new Set(['inst_b'])],
        ['here', new Set(['inst_b'])],
      ]),
    );
    expect(changes.sort()).toEqual(['gone:off', 'new:on']);
    expect(['gone', 'stays', 'new', 'here'].map((p) => registry.isOnline(p))).toEqual([false, true, true, true]);
    // An instance missing from the read (its heartbeat stopped) takes its principals with it.
    registry.replaceRemote(new Map());
    expect(changes.sort()).toEqual(['gone:off', 'new:off', 'new:on', 'stays:off']);
    expect(registry.isOnline('here')).toBe(true);
  });

  it('keeps, for pairs heard of while the read was in flight, what it heard rather than the older read', () => {
    const { registry, changes } = recording();
    registry.setRemote('inst_b', 'came', true);
    registry.setRemote('inst_b', 'left', true);
    registry.setRemote('inst_b', 'left', false);
    changes.length = 0;
    // The read was taken before `came` arrived and before `left` went.
    registry.replaceRemote(
      new Map([['left', new Set(['inst_b'])]]),
      new Set([presencePair('inst_b', 'came'), presencePair('inst_b', 'left')]),
    );
    expect(changes).toEqual([]);
    expect(registry.isOnline('came')).toBe(true);
    expect(registry.isOnline('left')).toBe(false);
  });
});
