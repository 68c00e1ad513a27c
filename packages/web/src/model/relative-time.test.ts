import { describe, expect, it } from 'vitest';
import { durationText, relativeTime } from './relative-time';

const now = Date.parse('2026-12-01T12:00:00Z');

describe('relativeTime', () => {
  it.each([
    ['2026-12-08T12:00:00Z', 'in 7 days'],
    ['2026-12-01T09:00:00Z', '3 hours ago'],
    ['2026-12-01T12:05:00Z', 'in 5 minutes'],
    ['2026-12-01T12:00:20Z', 'in less than a minute'],
    ['2026-12-01T11:59:40Z', 'just now'],
    ['2026-12-02T12:00:00Z', 'tomorrow'],
    ['not a time', 'not a time'],
  ])('%s', (iso, text) => expect(relativeTime(iso, now)).toBe(text));
});

describe('durationText', () => {
  it.each([
    [604_800_000 - 2_000, '7 days'],
    [86_400_000 - 1_500, '1 day'],
    [3_600_000 - 900, '1 hour'],
    [7_200_000, '2 hours'],
    [300_000, '5 minutes'],
    [1_000, '1 minute'],
  ])('%d ms', (ms, text) => expect(durationText(ms)).toBe(text));
});
