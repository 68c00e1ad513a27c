import { describe, expect, it } from 'vitest';
import { mergeBenchmarksFile, type Figure, type Machine } from './bench-report.js';
import { replaceMarkedSection, scaleMarkdown } from './scale-report.js';

const machine: Machine = {
  cpus: 2,
  cpuModel: 'Test CPU',
  node: 'v20.20.2',
  platform: 'linux x64',
  date: '2026-12-01T00:00:00.000Z',
  loadAverage: { start: 0.5, end: 2.5 },
};

const figures: Figure[] = [
  {
    section: 'Appends',
    name: 'two instances',
    unit: '/s',
    bubble: 13_000,
    baseline: 10_000,
    better: 'higher',
    target: '>= 1.3x one instance',
    meetsTarget: true,
    note: 'median of 3',
  },
];

describe('scale report', () => {
  it('writes one marked section with the figure, its ratio, verdict and note, and says when the machine was busy', () => {
    const md = scaleMarkdown(figures, machine, ['how it was measured']);
    expect(md.startsWith('<!-- bench:scale -->\n')).toBe(true);
    expect(md.endsWith('<!-- /bench:scale -->')).toBe(true);
    expect(md).toContain(
      '| two instances | 13,000 /s | 10,000 /s | 1.30x (higher is better) | >= 1.3x one instance | met |',
    );
    expect(md).toContain('- two instances: median of 3');
    expect(md).toContain('**busy machine');
    expect(md).toContain('- how it was measured');
  });

  it('replaces its own section in place, keeps the others, and appends when there is none yet', () => {
    const section = scaleMarkdown(figures, machine, []);
    const before = '# Benchmarks\n\ntop\n\n<!-- bench:scuba -->\nscuba\n<!-- /bench:scuba -->\n';
    const once = replaceMarkedSection(before, 'scale', section);
    expect(once).toBe(`${before}\n${section}\n`);
    const again = replaceMarkedSection(once, 'scale', section.replace('13,000', '14,000'));
    expect(again).toContain('14,000');
    expect(again).not.toContain('13,000');
    expect(again).toContain('<!-- bench:scuba -->\nscuba');
    expect(replaceMarkedSection(null, 'scale', section)).toBe(`${section}\n`);
  });

  it('survives a rewrite of the top of the file by bench:server', () => {
    const file = replaceMarkedSection('# Benchmarks\n\nold top\n', 'scale', scaleMarkdown(figures, machine, []));
    const rewritten = mergeBenchmarksFile(file, '# Benchmarks\n\nnew top\n');
    expect(rewritten).toContain('new top');
    expect(rewritten).toContain('<!-- bench:scale -->');
    expect(rewritten).toContain('13,000');
  });
});
