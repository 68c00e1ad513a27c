const UNITS: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "in 7 days", "3 hours ago", "in 5 minutes", "just now" (within a minute). */
export function relativeTime(iso: string, now: number, locale = 'en'): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const diff = at - now;
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) return format.format(Math.round(diff / ms), unit);
  }
  return diff >= 0 ? 'in less than a minute' : 'just now';
}

/** A length of time in words, to the nearest day, hour or minute: "7 days", "1 hour", "5 minutes". */
export function durationText(ms: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (ms >= 86_400_000 - 60_000) return plural(Math.round(ms / 86_400_000), 'day');
  if (ms >= 3_600_000 - 60_000) return plural(Math.round(ms / 3_600_000), 'hour');
  return plural(Math.max(1, Math.round(ms / 60_000)), 'minute');
}
