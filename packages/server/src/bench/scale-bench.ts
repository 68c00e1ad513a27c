/**
 * `npm run bench:scale`: several `bubble-server serve --database …` processes on one PostgreSQL,
 * each figure beside a baseline measured in the same run, written to BENCHMARKS.md between
 * `<!-- bench:scale -->` markers. A script, not a test: it prints figures and never fails on a
 * missed target.
 *
 * 1. Durable appends/s at 50 connections: one instance against raw `pg` group-committing the same
 *    rows in one process; two instances against one; three against two; one against Bubble on
 *    SQLite (scale-appends.ts).
 * 2. Fan-out p50/p99 for 100 subscribers spread over two instances at 1,000 events/s, the
 *    cross-instance half on its own; baseline Bubble on SQLite (scale-fanout.ts).
 * 3. Revocation everywhere: a token revoked on one instance to its socket closed on the other;
 *    baseline the same on one Bubble on SQLite (scale-revocation.ts).
 *
 * `--database URL` names a PostgreSQL server the bench may create (and drop) databases on;
 * default postgres://postgres@127.0.0.1:5432/postgres. `--only appends,fanout,revocation` runs
 * some sections and leaves BENCHMARKS.md alone. About four minutes for everything.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { consoleTable, type Figure, type Machine } from './bench-report.js';
import { log, repoRoot } from './bench-common.js';
import { scaleAppendFigures } from './scale-appends.js';
import { scaleFanoutFigures } from './scale-fanout.js';
import { replaceMarkedSection, SCALE_MARK, scaleMarkdown } from './scale-report.js';
import { scaleRevocationFigures } from './scale-revocation.js';

const SECTIONS = ['appends', 'fanout', 'revocation'] as const;
type Section = (typeof SECTIONS)[number];

function argument(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at < 0 ? undefined : argv[at + 1];
}

function sectionsFrom(argv: string[]): Section[] {
  const only = argument(argv, '--only');
  if (only === undefined) return [...SECTIONS];
  const wanted = only.split(',');
  const unknown = wanted.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown section(s) ${unknown.join(', ')}; expected ${SECTIONS.join(', ')}`);
  return wanted as Section[];
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const adminUrl = argument(argv, '--database') ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const sections = sectionsFrom(argv);
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const root = await mkdtemp(join(tmpdir(), 'bubble-scale-bench-'));
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    if (sections.includes('appends')) figures.push(...(await scaleAppendFigures(adminUrl, root, notes)));
    if (sections.includes('fanout')) figures.push(...(await scaleFanoutFigures(adminUrl, root, notes)));
    if (sections.includes('revocation')) figures.push(...(await scaleRevocationFigures(adminUrl, root, notes)));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const cpuList = cpus();
  const machine: Machine = {
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model.trim() ?? 'unknown CPU',
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    date: new Date().toISOString(),
    loadAverage: { start: loadAtStart, end: loadavg()[0] ?? 0 },
  };
  notes.push(
    `PostgreSQL: the server at ${new URL(adminUrl).host}, a fresh database per section, dropped after it. Whole run took ${Math.round((Date.now() - started) / 1000)} s.`,
  );
  process.stdout.write(`${consoleTable(figures)}\n`);
  log(
    `load average (1 min) at start / end: ${machine.loadAverage.start.toFixed(2)} / ${machine.loadAverage.end.toFixed(2)} on ${machine.cpus} CPUs`,
  );
  if (sections.length < SECTIONS.length) return;
  const path = join(repoRoot, 'BENCHMARKS.md');
  const current = await readFile(path, 'utf8').catch(() => null);
  await writeFile(path, replaceMarkedSection(current, SCALE_MARK, scaleMarkdown(figures, machine, notes)));
  process.stdout.write(`wrote ${path}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
