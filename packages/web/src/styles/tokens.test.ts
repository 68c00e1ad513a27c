import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every text colour the UI draws, on every background it draws it on, in both themes, meets
 * WCAG 2.2's 4.5:1 (1.4.3, normal text); the focus ring meets 3:1 (1.4.11). The colours are read
 * from `tokens.css` itself, so a changed token is checked as it ships.
 */
const css = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'tokens.css'), 'utf8');

type Theme = 'light' | 'dark';
const tokens = new Map<string, Record<Theme, string>>();
for (const match of css.matchAll(/--([a-z0-9-]+):\s*light-dark\((#[0-9a-f]{6}),\s*(#[0-9a-f]{6})\);/gi))
  tokens.set(match[1]!, { light: match[2]!, dark: match[3]! });
for (const match of css.matchAll(/--([a-z0-9-]+):\s*(#[0-9a-f]{6});/gi))
  tokens.set(match[1]!, { light: match[2]!, dark: match[2]! });

function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const value = (name: string, theme: Theme): string => {
  const token = tokens.get(name);
  if (token === undefined) throw new Error(`no colour token --${name} in tokens.css`);
  return token[theme];
};

/** [text, backgrounds it is drawn on]. */
const TEXT_PAIRS: [string, string[]][] = [
  [
    'fg',
    [
      'bg',
      'bg-subtle',
      'bg-muted',
      'accent-subtle',
      'code-bg',
      'diff-add-bg',
      'diff-del-bg',
      'success-bg',
      'warning-bg',
      'danger-bg',
    ],
  ],
  ['fg-muted', ['bg', 'bg-subtle', 'bg-muted', 'accent-subtle', 'code-bg', 'warning-bg', 'diff-add-bg', 'diff-del-bg']],
  ['accent', ['bg', 'bg-subtle', 'accent-subtle', 'warning-bg']],
  ['on-accent', ['accent-bg', 'accent-bg-hover']],
  ['success', ['bg', 'bg-subtle', 'success-bg']],
  ['warning', ['bg', 'bg-subtle', 'warning-bg']],
  ['danger', ['bg', 'bg-subtle', 'danger-bg']],
  ['bot', ['bot-bg', 'bg']],
  ...['keyword', 'string', 'comment', 'title', 'constant', 'variable', 'tag'].map((k): [string, string[]] => [
    `hl-${k}`,
    ['code-bg'],
  ]),
  ['avatar-fg', Array.from({ length: 12 }, (_, i) => `avatar-${i}`)],
];

const THEMES: Theme[] = ['light', 'dark'];

describe('colour contrast of the tokens', () => {
  it('reads the tokens', () => {
    expect(tokens.size).toBeGreaterThan(30);
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#2563eb', '#ffffff')).toBeCloseTo(5.17, 2);
  });

  for (const theme of THEMES) {
    for (const [text, backgrounds] of TEXT_PAIRS) {
      for (const background of backgrounds) {
        it(`${theme}: --${text} on --${background} is at least 4.5:1`, () => {
          const ratio = contrast(value(text, theme), value(background, theme));
          expect(ratio, `${value(text, theme)} on ${value(background, theme)}`).toBeGreaterThanOrEqual(4.5);
        });
      }
    }
    it(`${theme}: the focus ring stands out from the page at 3:1`, () => {
      for (const background of ['bg', 'bg-subtle'])
        expect(contrast(value('focus', theme), value(background, theme))).toBeGreaterThanOrEqual(3);
    });
  }
});
