import { useState } from 'preact/hooks';
import { Icon } from './icons';
import { applyTheme, nextTheme, pageStorage, readTheme, storeTheme, type ThemeChoice } from './theme';

const LABEL: Record<ThemeChoice, string> = {
  system: 'Theme: as the system',
  light: 'Theme: light',
  dark: 'Theme: dark',
};

/** One button: system → light → dark. The choice is kept in localStorage (a preference, not a secret). */
export function ThemeToggle() {
  const [choice, setChoice] = useState<ThemeChoice>(() => readTheme(pageStorage()));
  const next = nextTheme(choice);
  return (
    <button
      type="button"
      class="icon-button theme-toggle"
      aria-label={`${LABEL[choice]}. Switch to ${next === 'system' ? 'the system theme' : next}`}
      title={LABEL[choice]}
      data-theme-choice={choice}
      onClick={() => {
        storeTheme(pageStorage(), next);
        applyTheme(document.documentElement, next);
        setChoice(next);
      }}
    >
      <Icon name={choice === 'system' ? 'auto' : choice === 'light' ? 'sun' : 'moon'} />
    </button>
  );
}
