/**
 * @module platform/v8-young
 * The young generation of the main thread's V8 heap, where the objects a
 * request makes live and die. A worker thread's is bounded as it starts
 * (`resourceLimits.maxYoungGenerationSizeMb`); the main thread's only by
 * node's own flags (`--max-semi-space-size`), read before any code runs,
 * and V8 lets it grow to 32 MiB (Node 20, 22) or 128 (Node 24) under load.
 * V8 reads one flag again each time a scavenge grows it:
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
 * Lets this thread's young generation grow as V8 grows it until its two
 * semi-spaces hold `bytes` or more (looked at after each collection),
 * then holds it there. A scavenge grows it at most once, so it stops at
 * the first doubling that reaches `bytes`.
 */
export function growYoungGenerationTo(bytes: number): void {
  if (youngGenerationBytes() >= bytes) return holdYoungGeneration();
  const observer = new PerformanceObserver(() => {
    if (youngGenerationBytes() < bytes) return;
    holdYoungGeneration();
    observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
  releaseYoungGeneration();
}
