/**
 * @module ratelimit/shared/store
 * A store over shared counters: each thread of the process makes its own from
 * the same handle, and together they decide as one memory store would, with
 * no message between threads. A decision takes the table's lock (see ./lock)
 * for its reads and writes, so the checks of a request are all-or-nothing
 * across threads too. Apart from that, it is memory-store line for line: the
 * same decision rule, expiry, lazy sweep and choice of counter to drop when
 * full.
 */
import type { MemoryStore } from '../memory-store';
import { earlierHits, wouldExceed, type StoreDecision, type WindowCheck } from '../store';
import { hashKey, type HashOut } from './hash';
import { H_SECRET0, H_SECRET1, NONE, sharedWords, type SharedCounters } from './layout';
import { lock, releaseLockOf, unlock } from './lock';
import { counterTable } from './table';

/** Options of {@link createSharedStore}. */
export interface SharedStoreOptions {
  /** Clock in milliseconds, for tests. Every thread's store must read the same clock. */
  now?: () => number;
}

/** Expired counters looked at per write, as memory-store. */
const SWEEP_STEP = 2;
/** Counters looked at for an expired one when the table is full, before a live one is dropped, as memory-store. */
const FULL_SWEEP_STEP = 64;

/** This thread's store over the counters of `handle`, deciding as memory-store does, exactly across threads. */
export function createSharedStore(handle: SharedCounters, options: SharedStoreOptions = {}): MemoryStore {
  const words = sharedWords(handle);
  const table = counterTable(words);
  const now = options.now ?? Date.now;
  const secret0 = words[H_SECRET0];
  const secret1 = words[H_SECRET1];
  const maxKeys = table.maxKeys;
  // The hashes of a request's keys, worked out before the lock is taken: grown to the longest request seen.
  let hashes = new Int32Array(16);
  const out: HashOut = { a: 0, b: 0 };

  /** The live counter's slot, or NONE; an expired one is dropped. */
  function current(a: number, b: number, at: number): number {
    const slot = table.find(a, b);
    if (slot !== NONE && table.expiresAt(slot) <= at) {
      table.remove(slot);
      return NONE;
    }
    return slot;
  }

  function decideLocked(checks: readonly WindowCheck[], before: number[], earlier: number[] | undefined): boolean {
    const at = now();
    // The usual request has one descriptor: its live counter is kept from the look to the count.
    let only = NONE;
    let admitted = true;
    for (let i = 0; i < checks.length; i++) {
      only = current(hashes[2 * i], hashes[2 * i + 1], at);
      const value = only === NONE ? 0 : table.count(only);
      before[i] = value;
      if (wouldExceed(checks[i], value + (earlier?.[i] ?? 0))) admitted = false;
    }
    if (!admitted) return false;
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i];
      if (check.hits === 0) continue;
      const a = hashes[2 * i];
      const b = hashes[2 * i + 1];
      const slot = checks.length === 1 ? only : table.find(a, b);
      if (slot !== NONE && table.expiresAt(slot) > at) {
        table.addHits(slot, check.hits);
        continue;
      }
      if (slot !== NONE) table.remove(slot);
      table.sweep(at, SWEEP_STEP);
      if (table.size() >= maxKeys && !table.sweep(at, FULL_SWEEP_STEP)) {
        const oldest = table.oldest();
        if (oldest !== NONE) table.remove(oldest);
      }
      table.insert(a, b, check.hits, at + check.ttlMs);
    }
    return true;
  }

  function decide(checks: readonly WindowCheck[]): StoreDecision {
    const before = new Array<number>(checks.length);
    const earlier = earlierHits(checks);
    if (hashes.length < 2 * checks.length) hashes = new Int32Array(2 * checks.length);
    for (let i = 0; i < checks.length; i++) {
      hashKey(checks[i].key, secret0, secret1, out);
      hashes[2 * i] = out.a;
      hashes[2 * i + 1] = out.b;
    }
    lock(words);
    try {
      return { admitted: decideLocked(checks, before, earlier), before };
    } finally {
      unlock(words);
    }
  }

  return {
    kind: 'shared memory',
    get size() {
      return table.size();
    },
    decide,
    // The counters belong to the handle, and other threads' stores count on them: closing one store keeps them.
    async close() {},
  };
}

/**
 * Frees the lock of the counters of `handle` if the thread `threadId` held it
 * when it ended (stopped by `worker.terminate()`, out of memory): else every
 * other thread would wait for it for good. Call it when a thread that had a
 * store ends (its Worker's `exit` event). Whether the lock was that thread's;
 * its decision then may have counted some of its checks and not others.
 */
export function releaseAbandonedLock(handle: SharedCounters, threadId: number): boolean {
  return releaseLockOf(sharedWords(handle), threadId);
}
