/**
 * @module gateway/slices
 * Long work on the event loop, cut into slices: the work is a generator that
 * yields between its steps (a route built, a route described), and runs
 * either at once or a few milliseconds at a time, with the event loop free
 * in between to answer requests. Building the routes of 30 000 Mappings
 * takes about a second; in slices, no request waits for it.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Work that yields between its steps and returns `T`. */
export type Steps<T> = Generator<void, T, void>;

/** How long a slice may hold the event loop, in ms. */
export const SLICE_MS = 8;

/** Runs `steps` to its end in one go. */
export function runAtOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Runs `steps` in slices of about `sliceMs`, letting the event loop run
 * (timers, I/O, requests) between them. Work that ends within the first
 * slice ends without waiting for a turn of the loop.
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs: number = SLICE_MS): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** Elements merged between two yields of {@link sortSteps}. */
const MERGES_PER_STEP = 1024;

/**
 * `items` sorted by `compare` (stable), a step every {@link MERGES_PER_STEP}
 * elements merged: a bottom-up merge sort, since Array.prototype.sort of
 * 30 000 routes is a single step of a tenth of a second.
 */
export function* sortSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Steps<T[]> {
  let from = items.slice();
  let to = new Array<T>(from.length);
  let merged = 0;
  for (let width = 1; width < from.length; width *= 2) {
    for (let left = 0; left < from.length; left += 2 * width) {
      const middle = Math.min(left + width, from.length);
      const end = Math.min(left + 2 * width, from.length);
      let i = left;
      let j = middle;
      for (let k = left; k < end; k++) {
        to[k] = i < middle && (j >= end || compare(from[i], from[j]) <= 0) ? from[i++] : from[j++];
        if (++merged % MERGES_PER_STEP === 0) yield;
      }
    }
    [from, to] = [to, from];
  }
  return from;
}
