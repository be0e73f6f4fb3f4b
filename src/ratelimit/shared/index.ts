/**
 * @module ratelimit/shared
 * Rate-limit counters in a SharedArrayBuffer, for the threads of one process:
 * made once with {@link createSharedCounters}, handed to each thread, where
 * {@link createSharedStore} decides on them exactly as one memory store would.
 */
export { createSharedCounters, MAX_SHARED_KEYS, type SharedCounters, type SharedCountersOptions } from './layout';
export { createSharedStore, releaseAbandonedLock, type SharedStoreOptions } from './store';
