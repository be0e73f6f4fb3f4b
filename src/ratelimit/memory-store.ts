/**
 * @module ratelimit/memory-store
 * Counters in a Map, for one process. Atomic by construction: a decision runs
 * to its end without yielding. Expired windows are dropped lazily, a few at
 * each write, by a cursor that walks the map, so there is no timer per key;
 * the map is bounded: when full, it makes room with expired counters first,
 * and drops its oldest live counter only when a bounded look finds none.
 */
import { earlierHits, wouldExceed, type RateLimitStore, type StoreDecision, type WindowCheck } from './store';

export interface MemoryStoreOptions {
  /** Most counters kept at once (default 100 000): expired ones go first, then the oldest. */
  maxKeys?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

interface Counter {
  count: number;
  expiresAt: number;
}

/** Expired counters looked at per write: enough to keep up with the writes themselves. */
const SWEEP_STEP = 2;
/**
 * Counters looked at for an expired one when the map is full, before a live
 * one is dropped: a live counter dropped is a limit forgotten, and its oldest
 * may well be a long window (an hour, a day) still counting.
 */
const FULL_SWEEP_STEP = 64;

/** A store that decides synchronously. */
export interface MemoryStore extends RateLimitStore {
  decide(checks: readonly WindowCheck[]): StoreDecision;
  /** Counters held, expired ones not yet dropped included. */
  readonly size: number;
}

/** A memory store; the default of the rate-limit service. */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const maxKeys = options.maxKeys ?? 100_000;
  const now = options.now ?? Date.now;
  const counters = new Map<string, Counter>();
  let cursor: MapIterator<[string, Counter]> = counters.entries();

  /** Looks at `steps` counters from the cursor on, dropping the expired ones; whether any was. */
  function sweep(at: number, steps: number): boolean {
    let dropped = false;
    for (let i = 0; i < steps; i++) {
      let next = cursor.next();
      if (next.done) {
        cursor = counters.entries();
        next = cursor.next();
        if (next.done) return dropped;
      }
      if (next.value[1].expiresAt <= at) {
        counters.delete(next.value[0]);
        dropped = true;
      }
    }
    return dropped;
  }

  function current(key: string, at: number): Counter | undefined {
    const c = counters.get(key);
    if (c && c.expiresAt <= at) {
      counters.delete(key);
      return undefined;
    }
    return c;
  }

  function decide(checks: readonly WindowCheck[]): StoreDecision {
    const at = now();
    const before = new Array<number>(checks.length);
    const earlier = earlierHits(checks);
    // The usual request has one descriptor: its live counter is kept from the look to the count.
    let only: Counter | undefined;
    let admitted = true;
    for (let i = 0; i < checks.length; i++) {
      only = current(checks[i].key, at);
      const value = only?.count ?? 0;
      before[i] = value;
      if (wouldExceed(checks[i], value + (earlier?.[i] ?? 0))) admitted = false;
    }
    if (!admitted) return { admitted, before };
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i];
      if (check.hits === 0) continue;
      const c = checks.length === 1 ? only : counters.get(check.key);
      if (c && c.expiresAt > at) {
        c.count += check.hits;
        continue;
      }
      if (c) counters.delete(check.key);
      sweep(at, SWEEP_STEP);
      if (counters.size >= maxKeys && !sweep(at, FULL_SWEEP_STEP)) {
        const oldest = counters.keys().next();
        if (!oldest.done) counters.delete(oldest.value);
      }
      counters.set(check.key, { count: check.hits, expiresAt: at + check.ttlMs });
    }
    return { admitted, before };
  }

  return {
    kind: 'memory',
    get size() {
      return counters.size;
    },
    decide,
    async close() {
      counters.clear();
    },
  };
}
