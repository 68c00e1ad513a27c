/**
 * Disk stall probe (a child process of the benchmark): every 10 ms it writes 4 KiB to a file of
 * its own on the disk under test and waits for `fdatasync`, recording how long each took. An
 * append is answered only once durable, so while this probe sees a sync take N ms, every append
 * committed meanwhile waits about as long whatever the server does: the disk's share of a
 * latency percentile, printed beside it as the host jitter probe prints the CPU's.
 *
 * Protocol: parent sends `{dir}` to start, child answers `{ready: true}`; `'stop'` is answered
 * with a `DiskProbeResult`, then the child exits.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { quantile } from './bench-report.js';

export interface DiskProbeResult {
  samples: number;
  /** Sync durations, ms. */
  p99: number;
  max: number;
  /** Syncs that took 20 ms or more. */
  stallsOver20Ms: number;
}

const EVERY_MS = 10;
const BLOCK = Buffer.alloc(4096, 0x61);
/** The file is rewritten from the start past this size, so the probe's own footprint stays small. */
const WRAP_BYTES = 16 * 1024 * 1024;

function probe(parent: string): () => DiskProbeResult {
  const dir = mkdtempSync(join(parent, 'disk-probe-'));
  const fd = openSync(join(dir, 'probe.bin'), 'w');
  const took: number[] = [];
  let offset = 0;
  const timer = setInterval(() => {
    const startedAt = performance.now();
    writeSync(fd, BLOCK, 0, BLOCK.length, offset);
    fdatasyncSync(fd);
    took.push(performance.now() - startedAt);
    offset = (offset + BLOCK.length) % WRAP_BYTES;
  }, EVERY_MS);
  return () => {
    clearInterval(timer);
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
    const sorted = Float64Array.from(took).sort();
    return {
      samples: sorted.length,
      p99: quantile(sorted, 0.99),
      max: quantile(sorted, 1),
      stallsOver20Ms: took.filter((ms) => ms >= 20).length,
    };
  };
}

if (process.send !== undefined) {
  process.once('message', (job: { dir: string }) => {
    const stop = probe(job.dir);
    process.send?.({ ready: true });
    process.once('message', () => process.send?.(stop(), () => process.exit(0)));
  });
}
