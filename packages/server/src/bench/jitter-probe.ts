/**
 * Host jitter probe (a child process of the benchmark): an otherwise idle
 * process that asks for a 1 ms timer over and over and records how late each
 * one fires. Lateness here is the machine's, not any server's: CPU stolen from
 * this VM, scheduler delays, page faults. A latency percentile measured while
 * this probe saw a stall of N ms may carry N ms that no server code can remove.
 *
 * Protocol: parent sends `{}` to start, child answers `{ready: true}`; `'stop'`
 * is answered with a `JitterResult`, then the child exits.
 */
import { quantile } from './bench-report.js';

export interface JitterResult {
  samples: number;
  /** Timer lateness percentiles and maximum, in milliseconds. */
  p99: number;
  max: number;
  /** Times the probe fired 10 ms or more late. */
  stallsOver10Ms: number;
}

function probe(): () => JitterResult {
  const lateness: number[] = [];
  let expected = performance.now() + 1;
  const timer = setInterval(() => {
    const now = performance.now();
    lateness.push(Math.max(0, now - expected));
    expected = now + 1;
  }, 1);
  return () => {
    clearInterval(timer);
    const sorted = Float64Array.from(lateness).sort();
    return {
      samples: sorted.length,
      p99: quantile(sorted, 0.99),
      max: quantile(sorted, 1),
      stallsOver10Ms: lateness.filter((ms) => ms >= 10).length,
    };
  };
}

if (process.send !== undefined) {
  process.once('message', () => {
    const stop = probe();
    process.send?.({ ready: true });
    process.once('message', () => process.send?.(stop(), () => process.exit(0)));
  });
}
