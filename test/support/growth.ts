/**
 * @module test/support/growth
 * How the time a piece of work takes grows with its size, measured in the
 * test's own run: a budget that holds on a slow or loaded machine, where a
 * bound in milliseconds would not. Work that grows with its size takes
 * about `large / small` times as long for the large size; work that grows
 * with its square, that squared.
 *
 * The time is the processor time of the test's process, not the clock's:
 * on a loaded machine the clock also counts the time other processes had
 * the cores, which falls on a long run and spares a short one, and would
 * make linear work look quadratic.
 */

/** Processor time this process has used so far, in ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The median of `runs` timings of `work`, in ms of processor time. */
function medianMs(work: () => void, runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = cpuMs();
    work();
    times.push(cpuMs() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}

/**
 * How many times longer `work(large)` takes than `work(small)` (the median
 * of five runs of the small one, once warmed up, against one large run).
 */
export function timeGrowth(work: (size: number) => () => void, small: number, large: number): number {
  const smallWork = work(small);
  smallWork();
  const base = Math.max(medianMs(smallWork, 5), 0.05);
  return medianMs(work(large), 1) / base;
}
