// Opt-in timings of one drag, for benchmarks/drag_profile.py: nothing is recorded unless
// `window.ragsimTiming` is an array, which the profiler sets before a sample and reads after it.
// Each entry is [name, performance.now()]; the worker's own times (absolute, timeOrigin-based)
// are put on the page's clock here.

export function mark(name) {
  const t = globalThis.ragsimTiming;
  if (t) t.push([name, performance.now()]);
}

/** The worker's `timing` ({name: absolute ms}) as marks on this page's clock. */
export function markWorker(timing) {
  const t = globalThis.ragsimTiming;
  if (!t || !timing) return;
  for (const [name, at] of Object.entries(timing)) t.push([`worker:${name}`, at - performance.timeOrigin]);
}
