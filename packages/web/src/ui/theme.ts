/** The colour theme a person chose: follow the OS (`prefers-color-scheme`), or always light, or always dark. */
export type ThemeChoice = 'system' | 'light' | 'dark';

export const THEME_KEY = 'bubble.theme';

/** The stored choice; anything unreadable (no storage, an old value) is `system`. */
export function readTheme(storage: Pick<Storage, 'getItem'> | null): ThemeChoice {
  try {
    const value = storage?.getItem(THEME_KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

export function storeTheme(storage: Pick<Storage, 'setItem' | 'removeItem'> | null, choice: ThemeChoice): void {
  try {
    if (choice === 'system') storage?.removeItem(THEME_KEY);
    else storage?.setItem(THEME_KEY, choice);
  } catch {
    // Storage refused (a private window's quota): the choice holds for this page only.
  }
}

/**
 * Sets `data-theme` on the root element; the tokens (`styles/tokens.css`) read it through
 * `color-scheme`, so every `light-dark()` colour follows. Without it the OS decides.
 */
export function applyTheme(root: HTMLElement, choice: ThemeChoice): void {
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
}

/** system → light → dark → system: one button goes through all three. */
export function nextTheme(choice: ThemeChoice): ThemeChoice {
  return choice === 'system' ? 'light' : choice === 'light' ? 'dark' : 'system';
}

/** The page's storage, or null where reading it throws (storage disabled). */
export function pageStorage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
