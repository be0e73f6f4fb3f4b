/**
 * @module gateway/slices
 * Long work on the event loop, cut into slices: the work is a generator that
 * yields between its steps (a route built, a route described), and runs
 * either at once or a few milliseconds at a time, with the event loop free
 * in between to answer requests. Building the routes of 30 000 Mappings
 * takes about a second; in slices, no request waits for it. Work that many
 * requests may start at once (the diag page) shares one slice a turn
 * through a {@link SliceGate}, however many are under way.
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

/**
 * One slice of event-loop time a turn, shared by every piece of work that
 * goes through it: however many are under way, together they hold the loop
 * for about `sliceMs` before it turns, and each waits its turn in order.
 */
export interface SliceGate {
  /**
   * For work that begins: undefined when nothing else goes through the
   * gate, so that work which ends within its first slice ends without
   * waiting for a turn (as {@link runInSlices}); else as {@link pass}.
   */
  begin(): Promise<void> | undefined;
  /**
   * For work under way: undefined while the slice under way lasts (carry
   * on at once); once it is over, a promise that resolves when the caller's
   * next slice begins, at a later turn of the loop.
   */
  pass(): Promise<void> | undefined;
  /** Runs `steps` to its end, through {@link begin}, then {@link pass} before each step. */
  run<T>(steps: Steps<T>): Promise<T>;
}

/** Builds a {@link SliceGate} of slices of about `sliceMs`. */
export function createSliceGate(sliceMs: number = SLICE_MS): SliceGate {
  let sliceStart = -Infinity;
  // Whether work that began has had a slice in this turn: one a turn, else work begun again and again would hold the loop.
  let begunThisTurn = false;
  const waiting: (() => void)[] = [];
  let scheduled = false;
  /** The next waiter's slice, a turn of the loop later. One a turn, so that requests are answered in between. */
  const nextSlice = () => {
    scheduled = false;
    const resume = waiting.shift();
    if (resume === undefined) return;
    sliceStart = performance.now();
    resume();
    if (waiting.length > 0) schedule();
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(nextSlice);
  };
  const pass = (): Promise<void> | undefined => {
    if (performance.now() - sliceStart < sliceMs) return undefined;
    return new Promise<void>((resolve) => {
      waiting.push(resolve);
      schedule();
    });
  };
  const begin = (): Promise<void> | undefined => {
    if (waiting.length === 0 && !begunThisTurn && performance.now() - sliceStart >= sliceMs) {
      sliceStart = performance.now();
      begunThisTurn = true;
      setImmediate(() => (begunThisTurn = false));
      return undefined;
    }
    return pass();
  };
  return {
    begin,
    pass,
    async run(steps) {
      let wait = begin();
      for (;;) {
        if (wait !== undefined) await wait;
        const step = steps.next();
        if (step.done) return step.value;
        wait = pass();
      }
    },
  };
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
