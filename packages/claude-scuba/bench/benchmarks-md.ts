import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../BENCHMARKS.md');

/**
 * Writes one bench's marked section of the root BENCHMARKS.md, keeping the rest: bench:server
 * owns its top, and each other bench its `<!-- bench:name -->` … `<!-- /bench:name -->` part.
 */
export function writeBenchSection(name: string, section: string): void {
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  const marked = `${begin}\n${section}${end}\n`;
  const current = existsSync(ROOT) ? readFileSync(ROOT, 'utf8') : '# Benchmarks\n\n';
  const at = current.indexOf(begin);
  const next =
    at === -1
      ? `${current.trimEnd()}\n\n${marked}`
      : `${current.slice(0, at)}${marked}${current.slice(current.indexOf(end) + end.length + 1)}`;
  writeFileSync(ROOT, next);
}
