/** The `<!-- bench:scale -->` section of BENCHMARKS.md, written by `npm run bench:scale`. Pure. */
import { formatNumber, ratio, verdict, type Figure, type Machine } from './bench-report.js';

export const SCALE_MARK = 'scale';

export function scaleMarkdown(figures: readonly Figure[], machine: Machine, notes: readonly string[]): string {
  const busy = Math.max(machine.loadAverage.start, machine.loadAverage.end) > machine.cpus;
  const out: string[] = [
    `<!-- bench:${SCALE_MARK} -->`,
    '## Several instances on one PostgreSQL (`npm run bench:scale`)',
    '',
    `Written by \`npm run bench:scale\` (packages/server/src/bench/scale-bench.ts) on ${machine.date}, ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}; ` +
      `load average (1 min) ${machine.loadAverage.start.toFixed(2)} at the start, ${machine.loadAverage.end.toFixed(2)} at the end` +
      (busy ? ' (**busy machine: other work shared the CPUs**)' : '') +
      '.',
    'Every instance, the PostgreSQL server, the load generators and the receivers share these CPUs: on one machine a second instance',
    'adds no hardware, only a second event loop, so the scaling figures say what the design allows here, not what two machines would give.',
    '',
  ];
  for (const section of [...new Set(figures.map((f) => f.section))]) {
    out.push(`### ${section}`, '', '| figure | bubble | baseline | ratio | target | |', '|---|---:|---:|---:|---|---|');
    const inSection = figures.filter((f) => f.section === section);
    for (const f of inSection) {
      out.push(
        `| ${f.name} | ${formatNumber(f.bubble)} ${f.unit} | ${formatNumber(f.baseline)} ${f.unit} | ${formatNumber(ratio(f))}x (${f.better} is better) | ${f.target ?? ''} | ${verdict(f)} |`,
      );
    }
    const sectionNotes = inSection.filter((f) => f.note !== undefined).map((f) => `- ${f.name}: ${f.note}`);
    if (sectionNotes.length > 0) out.push('', ...sectionNotes);
    out.push('');
  }
  if (notes.length > 0) out.push('### Method', '', ...notes.map((n) => `- ${n}`), '');
  out.push(`<!-- /bench:${SCALE_MARK} -->`);
  return out.join('\n');
}

/** `current` with its `<!-- bench:NAME -->` section replaced by `section` (which carries the markers), or `section` appended. */
export function replaceMarkedSection(current: string | null, name: string, section: string): string {
  const marked = new RegExp(`<!-- bench:${name} -->\\n[\\s\\S]*?<!-- /bench:${name} -->`);
  if (current === null) return `${section}\n`;
  if (marked.test(current)) return current.replace(marked, () => section);
  return `${current.trimEnd()}\n\n${section}\n`;
}
