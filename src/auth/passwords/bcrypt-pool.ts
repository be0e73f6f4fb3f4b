/**
 * @module auth/passwords/bcrypt-pool
 * bcrypt checks on a few worker threads. One check costs tens of milliseconds
 * of CPU, and failures are never cached, so a burst of wrong passwords on the
 * main thread holds up every other request of the process. Here it only
 * waits, and when too many wait a check is refused at once.
 */
import bcrypt from 'bcryptjs';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

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

/** Checks bcrypt hashes away from the event loop. */
export interface BcryptPool {
  /**
   * Whether `password` matches `hash`, compared in constant time. Rejects at
   * once with a {@link BcryptPoolBusyError} when `maxQueued` checks are
   * already waiting, and with an Error when the thread running it died.
   */
  readonly compare: (password: string, hash: string) => Promise<boolean>;
  /** Stops the threads; waiting and running checks are rejected, later ones too. */
  close(): Promise<void>;
  /** Threads started and not stopped: at most the `threads` option. */
  readonly threads: number;
  /** Checks waiting for a thread. */
  readonly queued: number;
}

/** A check refused because too many were waiting: the caller should ask again shortly. */
export class BcryptPoolBusyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BcryptPoolBusyError';
  }
}

/**
 * What each thread runs: plain JavaScript passed with `eval`, so that it works
 * alike under tsx, from the compiled files and inside another application,
 * none of which has a worker file at a path known here. bcryptjs comes by the
 * absolute path this module resolves it to.
 */
const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
// Linux sets a nice value per thread; elsewhere it would be the whole process's.
if (workerData.niceness > 0 && process.platform === 'linux') {
  try {
    require('node:os').setPriority(0, workerData.niceness);
  } catch {}
}
parentPort.on('message', (job) => {
  let answer;
  try {
    answer = { ok: bcrypt.compareSync(job.password, job.hash) };
  } catch (err) {
    answer = { error: String((err && err.message) || err) };
  }
  parentPort.postMessage(answer);
});
`;

interface Job {
  password: string;
  hash: string;
  /** When it began to wait, from `performance.now()`. */
  queuedAt: number;
  resolve(ok: boolean): void;
  reject(err: Error): void;
}

/** A thread and the one check it is running, if any. */
interface Slot {
  worker: Worker;
  job: Job | undefined;
  /** Why it died, when it threw before exiting. */
  failure?: Error;
  /** Stops it once it has rested `idleMs`. */
  resting: NodeJS.Timeout | undefined;
}

type Answer = { ok: boolean } | { error: string };

function wholeNumber(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number, 0 or more`);
  return value;
}

/** Checks on the calling thread: bcryptjs's own asynchronous compare. */
function inlinePool(): BcryptPool {
  let closed = false;
  return {
    compare: (password, hash) =>
      closed ? Promise.reject(new Error('the bcrypt pool is closed')) : bcrypt.compare(password, hash),
    async close() {
      closed = true;
    },
    threads: 0,
    queued: 0,
  };
}

/**
 * Builds a pool of bcrypt threads. Threads start when a check needs one, and
 * are unreferenced while idle, so that they never keep a process alive; each
 * runs one check at a time. A thread that dies is dropped, its check rejected,
 * and another started for the checks still waiting. `source` is for tests: the
 * code each thread runs.
 */
export function createBcryptPool(options: BcryptPoolOptions = {}, source: string = WORKER_SOURCE): BcryptPool {
  const threads = wholeNumber('threads', options.threads ?? defaultBcryptThreads());
  const maxQueued = wholeNumber('maxQueued', options.maxQueued ?? DEFAULT_MAX_QUEUED);
  const maxWaitMs = wholeNumber('maxWaitMs', options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
  const niceness = wholeNumber('niceness', options.niceness ?? DEFAULT_NICENESS);
  if (niceness > 19) throw new RangeError('niceness must be from 0 to 19');
  const idleMs = wholeNumber('idleMs', options.idleMs ?? DEFAULT_IDLE_MS);
  if (threads === 0) return inlinePool();

  const bcryptjs = require.resolve('bcryptjs');
  const slots = new Set<Slot>();
  const idle: Slot[] = [];
  const waiting: Job[] = [];
  let closed = false;

  function start(): Slot {
    // No execArgv: a loader such as tsx in the parent's would only slow each thread's start.
    const worker = new Worker(source, { eval: true, workerData: { bcryptjs, niceness }, execArgv: [] });
    worker.unref();
    const slot: Slot = { worker, job: undefined, resting: undefined };
    worker.on('message', (answer: Answer) => {
      const job = slot.job;
      slot.job = undefined;
      worker.unref();
      if (job !== undefined) {
        if ('error' in answer) job.reject(new Error(`the bcrypt check failed: ${answer.error}`));
        else job.resolve(answer.ok === true);
      }
      if (!closed) next(slot);
    });
    worker.on('error', (err) => {
      slot.failure = err;
    });
    worker.on('exit', (code) => {
      slots.delete(slot);
      const at = idle.indexOf(slot);
      if (at !== -1) idle.splice(at, 1);
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined) {
        const why = slot.failure ? slot.failure.message : `exit code ${code}`;
        job.reject(closed ? closedError() : new Error(`the bcrypt thread stopped (${why})`, { cause: slot.failure }));
      }
      if (!closed) refill();
    });
    slots.add(slot);
    return slot;
  }

  function run(slot: Slot, job: Job): void {
    slot.job = job;
    // Referenced while it works: the process must not end before the answer.
    slot.worker.ref();
    slot.worker.postMessage({ password: job.password, hash: job.hash });
  }

  /** Refuses the waiting checks, oldest first, that have waited longer than `maxWaitMs`. */
  function refuseExpired(): void {
    const now = performance.now();
    while (waiting.length > 0 && now - waiting[0].queuedAt > maxWaitMs) {
      waiting.shift()!.reject(new BcryptPoolBusyError(`a bcrypt check waited more than ${maxWaitMs} ms for a thread`));
    }
  }

  /** The oldest waiting check that has not waited too long; those that have are refused. */
  function nextJob(): Job | undefined {
    refuseExpired();
    return waiting.shift();
  }

  /**
   * Refuses each waiting check once it has waited `maxWaitMs`, whether or
   * not a thread has come free meanwhile: a thread busy with a costly hash
   * (cost 17 takes seconds) would otherwise hold the checks behind it past
   * their callers' timeouts. One timer, for the oldest.
   */
  let expiry: NodeJS.Timeout | undefined;
  function watchOldest(): void {
    if (expiry !== undefined || waiting.length === 0) return;
    // One millisecond past the bound, which refuseExpired counts strictly.
    expiry = setTimeout(expire, Math.max(0, waiting[0].queuedAt + maxWaitMs - performance.now()) + 1);
    expiry.unref();
  }
  function expire(): void {
    expiry = undefined;
    refuseExpired();
    watchOldest();
  }

  /** A thread just finished: it takes the oldest waiting check, or rests. */
  function next(slot: Slot): void {
    const job = nextJob();
    if (job !== undefined) run(slot, job);
    else {
      idle.push(slot);
      if (idleMs > 0) {
        slot.resting = setTimeout(retire, idleMs, slot);
        slot.resting.unref();
      }
    }
  }

  /** A thread that rested `idleMs`: it stops (its 'exit' drops it); a check that comes meanwhile waits for another. */
  function retire(slot: Slot): void {
    slot.resting = undefined;
    const at = idle.indexOf(slot);
    if (at === -1 || closed) return;
    idle.splice(at, 1);
    void slot.worker.terminate();
  }

  /** The thread that rested least, if one rests. */
  function takeIdle(): Slot | undefined {
    const slot = idle.pop();
    if (slot !== undefined) {
      clearTimeout(slot.resting);
      slot.resting = undefined;
    }
    return slot;
  }

  /** Threads for waiting checks, in place of one that died. */
  function refill(): void {
    while (slots.size < threads) {
      const job = nextJob();
      if (job === undefined) return;
      run(start(), job);
    }
  }

  function closedError(): Error {
    return new Error('the bcrypt pool is closed');
  }

  function compare(password: string, hash: string): Promise<boolean> {
    if (closed) return Promise.reject(closedError());
    const free = takeIdle() ?? (slots.size < threads ? start() : undefined);
    if (free === undefined && waiting.length >= maxQueued) {
      return Promise.reject(new BcryptPoolBusyError(`${maxQueued} bcrypt checks are already waiting`));
    }
    return new Promise<boolean>((resolve, reject) => {
      const job: Job = { password, hash, queuedAt: free === undefined ? performance.now() : 0, resolve, reject };
      if (free !== undefined) run(free, job);
      else {
        waiting.push(job);
        watchOldest();
      }
    });
  }

  return {
    compare,
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(expiry);
      for (const job of waiting.splice(0)) job.reject(closedError());
      for (const slot of idle.splice(0)) clearTimeout(slot.resting);
      // Running checks are rejected as their threads exit.
      await Promise.all([...slots].map((slot) => slot.worker.terminate()));
    },
    get threads() {
      return slots.size;
    },
    get queued() {
      return waiting.length;
    },
  };
}
