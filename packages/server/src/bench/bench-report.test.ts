import { describe, expect, it } from 'vitest';
import {
  benchmarksMarkdown,
  consoleTable,
  growth,
  growthConsoleTable,
  median,
  mergeBenchmarksFile,
  quantile,
  ratio,
  type Figure,
  type GrowthRow,
} from './bench-report.js';

const figures: Figure[] = [
  {
    section: 'Appends',
    name: '50 connections',
    unit: '/s',
    bubble: 12_000,
    baseline: 20_000,
    better: 'higher',
    target: '>= 10,000/s',
    meetsTarget: true,
  },
  {
    section: 'Fan-out',
    name: 'p99, 100 subscribers',
    unit: 'ms',
    bubble: 20,
    baseline: 31,
    better: 'lower',
    target: '<= 15 ms',
    meetsTarget: false,
    note: 'noisy',
  },
];

describe('bench report', () => {
  it('computes the ratio bubble / baseline', () => {
    expect(ratio(figures[0] as Figure)).toBeCloseTo(0.6);
    expect(Number.isNaN(ratio({ ...(figures[0] as Figure), baseline: 0 }))).toBe(true);
  });

  it('reads a quantile of sorted values by nearest rank, the maximum at 1', () => {
    const sorted = Float64Array.from({ length: 200 }, (_, i) => i + 1);
    expect(quantile(sorted, 0.5)).toBe(101);
    expect(quantile(sorted, 0.99)).toBe(199);
    expect(quantile(sorted, 1)).toBe(200);
    expect(quantile([7], 0.99)).toBe(7);
    expect(Number.isNaN(quantile([], 0.5))).toBe(true);
  });

  it('takes the median of rounds, whatever their order', () => {
    expect(median([31.2, 12.5, 13.1])).toBe(13.1);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
    expect(Number.isNaN(median([]))).toBe(true);
  });

  it('writes every figure, its ratio and whether it met its target into the markdown', () => {
    const md = benchmarksMarkdown(
      figures,
      {
        cpus: 2,
        cpuModel: 'cpu',
        node: 'v20.20.2',
        platform: 'linux x64',
        date: '2026-11-29',
        loadAverage: { start: 0.5, end: 3.25 },
      },
      ['one note'],
    );
    expect(md).toContain('| 50 connections | 12,000 /s | 20,000 /s | 0.60x (higher is better) | >= 10,000/s | met |');
    expect(md).toContain(
      '| p99, 100 subscribers | 20.0 ms | 31.0 ms | 0.65x (lower is better) | <= 15 ms | **missed** |',
    );
    expect(md).toContain('- p99, 100 subscribers: noisy');
    expect(md).toContain('2 CPUs (nproc)');
    expect(md).toContain('- one note');
    expect(md).toContain('0.50 / 3.25 (**busy machine');
  });

  it('prints one console row per figure', () => {
    const table = consoleTable(figures).split('\n');
    expect(table).toHaveLength(3);
    expect(table[2]).toContain('MISSED');
  });

  it('keeps the sections other benches marked in BENCHMARKS.md and drops its own old text', () => {
    const scuba = '<!-- bench:scuba -->\n## claude-scuba\n\n| warm | 60 ms |\n<!-- /bench:scuba -->\n';
    const current = `# Benchmarks\n\nold server figures\n\n${scuba}`;
    const merged = mergeBenchmarksFile(current, '# Benchmarks\n\nnew server figures\n');
    expect(merged).toBe(`# Benchmarks\n\nnew server figures\n\n${scuba}`);
    expect(merged).not.toContain('old server figures');
    expect(mergeBenchmarksFile(null, '# Benchmarks\n')).toBe('# Benchmarks\n');
  });

  it('writes the growth table, large / small and large / baseline, just before the sections it sums up', () => {
    const rows: GrowthRow[] = [
      {
        name: 'newest page p99',
        unit: 'ms',
        small: { label: '1,000 events', value: 2 },
        large: { label: '1,000,000 events', value: 2.5 },
        baseline: { label: 'bare http', value: 2 },
        better: 'lower',
        target: 'large <= 1.5x small',
        meetsTarget: true,
      },
      {
        name: 'fan-out p99',
        unit: 'ms',
        small: { label: '100 subscribers', value: 10 },
        large: { label: '1,000 subscribers', value: 40 },
        baseline: { label: 'bare ws', value: 400 },
        better: 'lower',
        target: 'large <= 25 ms',
        meetsTarget: false,
      },
    ];
    expect(growth(rows[0] as GrowthRow)).toBeCloseTo(1.25);
    const machine = {
      cpus: 2,
      cpuModel: 'cpu',
      node: 'v20',
      platform: 'linux',
      date: 'd',
      loadAverage: { start: 1, end: 1 },
    };
    const md = benchmarksMarkdown(figures, machine, [], {
      title: 'Growth',
      intro: 'small against large',
      rows,
      sections: ['Fan-out'],
    });
    expect(md).toContain(
      '| newest page p99 | 2.00 ms (1,000 events) | 2.50 ms (1,000,000 events) | 1.25x | 2.00 ms (bare http) | 1.25x (lower is better) | large <= 1.5x small | met |',
    );
    expect(md).toContain(
      '| fan-out p99 | 10.0 ms (100 subscribers) | 40.0 ms (1,000 subscribers) | 4.00x | 400 ms (bare ws) | 0.10x (lower is better) | large <= 25 ms | **missed** |',
    );
    expect(md.indexOf('## Appends')).toBeLessThan(md.indexOf('## Growth'));
    expect(md.indexOf('## Growth')).toBeLessThan(md.indexOf('## Fan-out'));
    const table = growthConsoleTable(rows).split('\n');
    expect(table).toHaveLength(3);
    expect(table[2]).toContain('MISSED');
  });
});
