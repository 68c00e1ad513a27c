/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}
