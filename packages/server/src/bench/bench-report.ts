/** Turns benchmark figures into the console table and BENCHMARKS.md. Pure. */

export type Better = 'higher' | 'lower';

export interface Figure {
  section: string;
  name: string;
  unit: string;
  bubble: number;
  baseline: number;
  better: Better;
  /** e.g. ">= 10000" */
  target?: string;
  /** Whether the Bubble figure meets the target (undefined: no target). */
  meetsTarget?: boolean;
  note?: string;
}

/**
 * One row of the growth table (issue #19): a figure at a small and a large size, its growth
 * (large / small), and the baseline measured at the large size in the same run.
 */
export interface GrowthRow {
  name: string;
  unit: string;
  small: { label: string; value: number };
  large: { label: string; value: number };
  /** The baseline at the large size, and what it is. */
  baseline: { label: string; value: number };
  better: Better;
  /** e.g. "large <= 1.5x small"; what `meetsTarget` was decided on. */
  target?: string;
  meetsTarget?: boolean;
}

/** large / small: how much the figure moved with size. */
export const growth = (row: GrowthRow): number =>
  row.small.value === 0 ? Number.NaN : row.large.value / row.small.value;

/** large / baseline (at the large size). */
export const growthAgainstBaseline = (row: GrowthRow): number =>
  row.baseline.value === 0 ? Number.NaN : row.large.value / row.baseline.value;

function growthCells(row: GrowthRow): string[] {
  return [
    row.name,
    `${formatNumber(row.small.value)} ${row.unit} (${row.small.label})`,
    `${formatNumber(row.large.value)} ${row.unit} (${row.large.label})`,
    `${formatNumber(growth(row))}x`,
    `${formatNumber(row.baseline.value)} ${row.unit} (${row.baseline.label})`,
    `${formatNumber(growthAgainstBaseline(row))}x (${row.better} is better)`,
    row.target ?? '',
  ];
}

const GROWTH_HEADER = ['figure', 'small', 'large', 'large / small', 'baseline (large)', 'large / baseline', 'target'];

export function growthConsoleTable(rows: readonly GrowthRow[]): string {
  const cells = rows.map((row) => [
    ...growthCells(row),
    row.meetsTarget === undefined ? '' : row.meetsTarget ? 'met' : 'MISSED',
  ]);
  const header = [...GROWTH_HEADER, ''];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] as string).length)));
  const line = (row: string[]): string =>
    row
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}

export function growthMarkdown(rows: readonly GrowthRow[]): string[] {
  return [
    `| ${GROWTH_HEADER.join(' | ')} | |`,
    '|---|---:|---:|---:|---:|---:|---|---|',
    ...rows.map((row) => {
      const verdictCell = row.meetsTarget === undefined ? '' : row.meetsTarget ? 'met' : '**missed**';
      return `| ${growthCells(row).join(' | ')} | ${verdictCell} |`;
    }),
  ];
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  node: string;
  platform: string;
  date: string;
  /** 1-minute load averages at the start and the end of the run: other work on the machine skews every figure. */
  loadAverage: { start: number; end: number };
}

/** The value at quantile `q` (0..1, nearest rank) of ascending `sorted` values; NaN for none. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function ratio(figure: Figure): number {
  return figure.baseline === 0 ? Number.NaN : figure.bubble / figure.baseline;
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

export function verdict(figure: Figure): string {
  if (figure.meetsTarget === undefined) return '';
  return figure.meetsTarget ? 'met' : '**missed**';
}

export function consoleTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => [
    `${f.section}: ${f.name}`,
    `${formatNumber(f.bubble)} ${f.unit}`,
    `${formatNumber(f.baseline)} ${f.unit}`,
    `${formatNumber(ratio(f))}x (${f.better} is better)`,
    f.target === undefined ? '' : `target ${f.target}: ${f.meetsTarget ? 'met' : 'MISSED'}`,
  ]);
  const header = ['figure', 'bubble', 'baseline', 'bubble/baseline', ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The growth table and what it is about, as its own section of BENCHMARKS.md. */
export interface GrowthSection {
  title: string;
  intro: string;
  rows: readonly GrowthRow[];
  /** The figure sections it sums up: the table goes just before the first of them (else after all). */
  sections: readonly string[];
}

export function benchmarksMarkdown(
  figures: readonly Figure[],
  machine: Machine,
  notes: readonly string[],
  growthSection?: GrowthSection,
): string {
  const sections = [...new Set(figures.map((f) => f.section))];
  const out: string[] = [
    '# Benchmarks',
    '',
    'Written by `npm run bench:server` (packages/server/src/bench/server-bench.ts); every run rewrites this part of the file; the sections below it that other `bench:*` scripts mark are kept.',
    'Each figure is measured next to a baseline in the same run on the same machine, so the ratio is the figure to read.',
    '',
    `- Date: ${machine.date}`,
    `- Machine: ${machine.cpus} CPUs (nproc), ${machine.cpuModel}, ${machine.platform}`,
    `- Node: ${machine.node}`,
    `- Load average (1 min) at start / end: ${machine.loadAverage.start.toFixed(2)} / ${machine.loadAverage.end.toFixed(2)}` +
      (Math.max(machine.loadAverage.start, machine.loadAverage.end) > machine.cpus
        ? ' (**busy machine: other work shared the CPUs; figures are pessimistic**)'
        : ''),
    '',
    '## Reproduce',
    '',
    '```sh',
    'npm ci && npm run build',
    'npm run bench:server',
    '```',
    '',
    'The server under test is the real `bubble-server serve` on a fresh SQLite data dir, in its own process;',
    'load generators, subscribers and baselines run in separate processes; all traffic is on loopback.',
    '',
  ];
  const growthLines =
    growthSection === undefined || growthSection.rows.length === 0
      ? []
      : [`## ${growthSection.title}`, '', growthSection.intro, '', ...growthMarkdown(growthSection.rows), ''];
  const growthAt = sections.findIndex((section) => growthSection?.sections.includes(section));
  for (const [index, section] of sections.entries()) {
    if (index === growthAt) out.push(...growthLines);
    out.push(
      `## ${section}`,
      '',
      '| figure | bubble | baseline | bubble / baseline | target | |',
      '|---|---:|---:|---:|---|---|',
    );
    for (const f of figures.filter((x) => x.section === section)) {
      out.push(
        `| ${f.name} | ${formatNumber(f.bubble)} ${f.unit} | ${formatNumber(f.baseline)} ${f.unit} | ${formatNumber(ratio(f))}x (${f.better} is better) | ${f.target ?? ''} | ${verdict(f)} |`,
      );
    }
    const sectionNotes = figures
      .filter((x) => x.section === section && x.note !== undefined)
      .map((x) => `- ${x.name}: ${x.note}`);
    if (sectionNotes.length > 0) out.push('', ...sectionNotes);
    out.push('');
  }
  if (growthAt < 0) out.push(...growthLines);
  if (notes.length > 0) out.push('## Method and notes', '', ...notes.map((n) => `- ${n}`), '');
  return out.join('\n');
}

const MARKED_SECTION = /<!-- bench:([a-z0-9-]+) -->\n[\s\S]*?<!-- \/bench:\1 -->\n?/g;

/**
 * BENCHMARKS.md is shared by every `bench:*` script: this bench owns the top of the file, and
 * the sections other benches write between `<!-- bench:NAME -->` markers are kept as they are.
 */
export function mergeBenchmarksFile(current: string | null, serverMarkdown: string): string {
  const kept = current === null ? [] : [...current.matchAll(MARKED_SECTION)].map((match) => match[0].trimEnd());
  return kept.length === 0 ? serverMarkdown : `${serverMarkdown.trimEnd()}\n\n${kept.join('\n\n')}\n`;
}
