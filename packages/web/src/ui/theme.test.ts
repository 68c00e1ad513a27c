import { describe, expect, it } from 'vitest';
import { nextTheme, readTheme, storeTheme, THEME_KEY } from './theme';

function memoryStorage() {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    removeItem: (k: string) => void items.delete(k),
  };
}

describe('the theme choice', () => {
  it('is remembered, and forgotten when it goes back to the system', () => {
    const storage = memoryStorage();
    expect(readTheme(storage)).toBe('system');
    storeTheme(storage, 'dark');
    expect(readTheme(storage)).toBe('dark');
    storeTheme(storage, 'system');
    expect(storage.items.has(THEME_KEY)).toBe(false);
  });

  it('reads anything else as the system, and survives storage that throws', () => {
    const storage = memoryStorage();
    storage.setItem(THEME_KEY, 'purple');
    expect(readTheme(storage)).toBe('system');
    const broken = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('quota');
      },
      removeItem: () => undefined,
    };
    expect(readTheme(broken)).toBe('system');
    expect(() => storeTheme(broken, 'light')).not.toThrow();
    expect(readTheme(null)).toBe('system');
  });

  it('cycles system → light → dark → system', () => {
    expect([nextTheme('system'), nextTheme('light'), nextTheme('dark')]).toEqual(['light', 'dark', 'system']);
  });
});
