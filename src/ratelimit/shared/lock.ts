/**
 * @module ratelimit/shared/lock
 * The one lock of the shared table, taken for the whole of a request's
 * decision. One lock is what keeps a request's descriptors all-or-nothing
 * across threads without more: per-counter compare-and-swap would make each
 * counter exact alone, but a request of two descriptors would then need to
 * claim both, undo on refusal and order its claims to avoid deadlock, and
 * inserting or moving slots would need its own protocol. A decision holds the
 * lock for the time of a few slot reads and writes, far less than the rest of
 * the request's work, so a handful of threads seldom find it taken.
 *
 * The word holds its owner's tag (thread id + 1): a taker spins a little,
 * then sleeps in `Atomics.wait` (allowed on every Node thread, the main one
 * included) until the owner's release wakes it. A thread stopped while it
 * held the lock (`worker.terminate()`, out of memory) would leave it held for
 * good: {@link releaseAbandonedLock} lets whoever sees the thread end free it.
 */
import { threadId } from 'node:worker_threads';
import { H_LOCK, H_WAITERS } from './layout';

/** Looks at the word this many times before sleeping: a decision is over sooner than a sleep and a wake. */
const SPINS = 64;

/** This thread's tag in the lock word. */
export const OWN_TAG = threadId + 1;

/** Takes the lock for this thread, waiting as long as another holds it. */
export function lock(words: Int32Array): void {
  const held = Atomics.compareExchange(words, H_LOCK, 0, OWN_TAG);
  if (held === 0) return;
  // Waiting for itself, the thread would wait for good: a clock that decides, say.
  if (held === OWN_TAG) throw new Error('shared counters: a decision was asked for within another on the same thread');
  for (let i = 0; i < SPINS; i++) {
    if (Atomics.load(words, H_LOCK) === 0 && Atomics.compareExchange(words, H_LOCK, 0, OWN_TAG) === 0) return;
  }
  Atomics.add(words, H_WAITERS, 1);
  for (;;) {
    const owner = Atomics.compareExchange(words, H_LOCK, 0, OWN_TAG);
    if (owner === 0) break;
    // Sleeps only while `owner` still holds it: a release in between makes the wait return at once.
    Atomics.wait(words, H_LOCK, owner);
  }
  Atomics.sub(words, H_WAITERS, 1);
}

/** Releases the lock this thread holds, waking one waiter. */
export function unlock(words: Int32Array): void {
  Atomics.store(words, H_LOCK, 0);
  if (Atomics.load(words, H_WAITERS) > 0) Atomics.notify(words, H_LOCK, 1);
}

/** Frees the lock if the thread `threadId` holds it; whether it did. */
export function releaseLockOf(words: Int32Array, ofThreadId: number): boolean {
  if (Atomics.compareExchange(words, H_LOCK, ofThreadId + 1, 0) !== ofThreadId + 1) return false;
  Atomics.notify(words, H_LOCK);
  return true;
}
