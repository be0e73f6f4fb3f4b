/**
 * @module auth/passwords/bcrypt-settings
 * How a pool of bcrypt threads may be sized and paced: its options, their
 * defaults and the checks they must pass.
 */
import { availableParallelism } from 'node:os';

/** Checks that may wait for a thread by default: a few seconds of work at cost 10. */
export const DEFAULT_MAX_QUEUED = 64;
/** How long a check may wait for a thread before it is refused, in ms. */
export const DEFAULT_MAX_WAIT_MS = 1000;
/**
 * The nice value of the threads by default. A check (tens of ms at cost 10)
 * that shares a core with the event loop would otherwise take half of it
 * while it runs, and the requests beside it wait. At 10, the scheduler's
 * weights leave the event loop about nine tenths of a saturated core, and a
 * check takes longer instead (figures: bench/results/bcrypt-threads.md).
 */
export const DEFAULT_NICENESS = 10;

/**
 * How long a thread rests with no check before it stops, by default. A
 * thread's V8 heap, left idle, is collected once more by V8's memory
 * reducer about 8 s after the thread started (two mark-compacts of 5 to
 * 12 ms, on the cores the event loop uses): one that stops before then
 * costs nothing more, and the memory it held. Starting one again costs it a few tens of ms, off the
 * event loop.
 */
export const DEFAULT_IDLE_MS = 1000;

/**
 * The default number of threads: one CPU is left to the event loop, and
 * beyond four a flood of wrong passwords would only take more of the machine.
 */
export function defaultBcryptThreads(): number {
  return Math.min(4, Math.max(1, availableParallelism() - 1));
}

/** Options of {@link createBcryptPool}. */
export interface BcryptPoolOptions {
  /**
   * Worker threads checking hashes, each started when first needed. 0 checks
   * on the calling thread, with no bound. Default {@link defaultBcryptThreads}.
   */
  threads?: number;
  /**
   * Checks that may wait for a thread; one more is refused with a
   * {@link BcryptPoolBusyError}. Default {@link DEFAULT_MAX_QUEUED}.
   */
  maxQueued?: number;
  /**
   * How long a check may wait for a thread, in ms; one that waited longer is
   * refused with a {@link BcryptPoolBusyError} instead of run, so that a busy
   * CPU cannot hold a check past its caller's timeout. Default
   * {@link DEFAULT_MAX_WAIT_MS}.
   */
  maxWaitMs?: number;
  /**
   * The threads' nice value, from 0 (the event loop's) to 19, so that on a
   * core they share the event loop comes first. Linux only: elsewhere a nice
   * value is the whole process's, and it is left alone. Default
   * {@link DEFAULT_NICENESS}.
   */
  niceness?: number;
  /**
   * How long a thread may rest with no check before it stops, in ms; the
   * next check starts one again. 0 keeps idle threads for ever. Default
   * {@link DEFAULT_IDLE_MS}.
   */
  idleMs?: number;
}

/** The options of a pool, each checked and defaulted. */
export interface BcryptPoolSettings {
  threads: number;
  maxQueued: number;
  maxWaitMs: number;
  niceness: number;
  idleMs: number;
}

function wholeNumber(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number, 0 or more`);
  return value;
}

/** `options` checked, with their defaults; throws a RangeError on a value out of range. */
export function bcryptPoolSettings(options: BcryptPoolOptions): BcryptPoolSettings {
  const threads = wholeNumber('threads', options.threads ?? defaultBcryptThreads());
  const maxQueued = wholeNumber('maxQueued', options.maxQueued ?? DEFAULT_MAX_QUEUED);
  const maxWaitMs = wholeNumber('maxWaitMs', options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  const niceness = wholeNumber('niceness', options.niceness ?? DEFAULT_NICENESS);
  if (niceness > 19) throw new RangeError('niceness must be from 0 to 19');
  const idleMs = wholeNumber('idleMs', options.idleMs ?? DEFAULT_IDLE_MS);
  return { threads, maxQueued, maxWaitMs, niceness, idleMs };
}
