/**
 * @module platform/v8-young
 * The young generation of the main thread's V8 heap, where the objects a
 * request makes live and die. A worker thread's is bounded as it starts
 * (`resourceLimits.maxYoungGenerationSizeMb`); the main thread's only by
 * node's own flags (`--max-semi-space-size`), read before any code runs,
 * and V8 lets it grow to 32 MiB (Node 20, 22) or 128 (Node 24) under load.
 * V8 reads one flag again each time a scavenge would grow it:
 * `--semi-space-growth-factor`, what it multiplies the capacity by
 * (`v8.setFlagsFromString`, process-wide). At 1 it does not grow; at V8's
 * default of 2 it doubles. V8 also reads `--parallel-scavenge` at each
 * scavenge: off, the thread that allocated collects alone, without waking
 * V8's helper threads. Written against the V8 of Node 20 to 24;
 * test/platform/v8-young checks both.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { nodeFlagGiven } from './node-flags';

/** V8's growth factor, and the one that holds the young generation where it is. */
const GROWS = '--semi-space-growth-factor=2';
const HOLDS = '--semi-space-growth-factor=1';

/** Whether node was started with a young-generation flag of its own (`node --max-semi-space-size=4`, NODE_OPTIONS): left alone then. */
export function youngGenerationFlagsGiven(execArgv: readonly string[] = process.execArgv, env = process.env): boolean {
  return nodeFlagGiven(/^--(max|min)-semi-space-size|^--semi-space-growth-factor/, execArgv, env);
}

/** Whether node was started with a flag of its own on how V8 scavenges (`--parallel-scavenge`, `--single-threaded-gc`): left alone then. */
export function scavengeFlagsGiven(execArgv: readonly string[] = process.execArgv, env = process.env): boolean {
  // `single[-_]threaded` also matches `--single-threaded-gc`: the word ends before its `-gc`.
  return nodeFlagGiven(/^--(no-)?(parallel[-_]scavenge|single[-_]threaded)\b/, execArgv, env);
}

/** Scavenges on V8's helper threads as well (`true`, V8's default), or on the thread that allocated alone; on every thread. */
export function scavengeInParallel(parallel: boolean): void {
  setFlagsFromString(parallel ? '--parallel-scavenge' : '--no-parallel-scavenge');
}

/** The capacity of this thread's young generation (its two semi-spaces), in bytes. */
export function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}

/** Holds the young generation at its size now: a scavenge no longer grows it, on any thread. */
export function holdYoungGeneration(): void {
  setFlagsFromString(HOLDS);
}

/** Lets the young generation grow again as V8 grows it, on every thread. */
export function releaseYoungGeneration(): void {
  setFlagsFromString(GROWS);
}

/**
 * Keeps this thread's young generation at `bytes` or just past it (its two
 * semi-spaces, looked at after each collection): it grows as V8 grows it
 * while it is smaller, one doubling at most a scavenge, and is held once it
 * is not. V8 shrinks it again on its own, to its least, at a collection
 * that finds the thread allocated little for some seconds (a server left
 * idle): held then, it would stay there, collected more often under the
 * next load and passing more of each request's objects on to the old
 * generation. So the keeper stays, and lets it grow back under that load.
 * Returns what stops the keeping, leaving the young generation as it is
 * then.
 */
export function keepYoungGenerationAt(bytes: number): () => void {
  let growing: boolean | undefined;
  const steer = (): void => {
    const grow = youngGenerationBytes() < bytes;
    if (grow === growing) return;
    growing = grow;
    setFlagsFromString(grow ? GROWS : HOLDS);
  };
  const observer = new PerformanceObserver(steer);
  observer.observe({ entryTypes: ['gc'] });
  steer();
  return () => observer.disconnect();
}
