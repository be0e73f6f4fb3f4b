/**
 * @module ratelimit/shared/table
 * The counters' hash table in shared memory, for a holder of the lock: linear
 * probing from the slot the first hash word names, deletion by shifting the
 * slots after back (so no tombstones lengthen the probes), and a doubly linked
 * list of the slots in insertion order, whose head is the oldest counter.
 */
import {
  H_CURSOR,
  H_HEAD,
  H_MAX_KEYS,
  H_SIZE,
  H_SLOTS,
  H_TAIL,
  HEADER_WORDS,
  NONE,
  S_COUNT,
  S_EXPIRES,
  S_HASH_A,
  S_HASH_B,
  S_NEXT,
  S_PREV,
  S_USED,
  SLOT_WORDS,
} from './layout';

/** The table's operations on one thread's views of the buffer. Each must run under the lock. */
export interface CounterTable {
  readonly maxKeys: number;
  /** The slot of the counter hashed (a, b), or {@link NONE}. */
  find(a: number, b: number): number;
  count(slot: number): number;
  expiresAt(slot: number): number;
  addHits(slot: number, hits: number): void;
  /** A new counter; there must be no counter of that hash and fewer than maxKeys. */
  insert(a: number, b: number, count: number, expiresAt: number): void;
  remove(slot: number): void;
  /** The oldest counter's slot, or {@link NONE}. */
  oldest(): number;
  /** Counters held, expired ones not yet dropped included. */
  size(): number;
  /**
   * Looks at `steps` counters from the cursor on, in insertion order, dropping
   * expired ones; whether any was. Past the newest, the cursor starts again
   * at the oldest.
   */
  sweep(at: number, steps: number): boolean;
}

/** The table over `words` (a view of the whole buffer). */
export function counterTable(words: Int32Array): CounterTable {
  const doubles = new Float64Array(words.buffer);
  const mask = words[H_SLOTS] - 1;
  const base = (slot: number) => HEADER_WORDS + slot * SLOT_WORDS;

  function find(a: number, b: number): number {
    for (let slot = a & mask; ; slot = (slot + 1) & mask) {
      const w = base(slot);
      if (words[w + S_USED] === 0) return NONE;
      if (words[w + S_HASH_A] === a && words[w + S_HASH_B] === b) return slot;
    }
  }

  function insert(a: number, b: number, count: number, expiresAt: number): void {
    let slot = a & mask;
    while (words[base(slot) + S_USED] !== 0) slot = (slot + 1) & mask;
    const w = base(slot);
    const tail = words[H_TAIL];
    words[w + S_HASH_A] = a;
    words[w + S_HASH_B] = b;
    words[w + S_PREV] = tail;
    words[w + S_NEXT] = NONE;
    doubles[(w + S_EXPIRES) >> 1] = expiresAt;
    doubles[(w + S_COUNT) >> 1] = count;
    words[w + S_USED] = 1;
    if (tail === NONE) words[H_HEAD] = slot;
    else words[base(tail) + S_NEXT] = slot;
    words[H_TAIL] = slot;
    // A cursor past the last counter goes on to the counters written after it, as a Map's iterator does.
    if (words[H_CURSOR] === NONE) words[H_CURSOR] = slot;
    Atomics.store(words, H_SIZE, words[H_SIZE] + 1);
  }

  /** Takes `slot` out of the insertion list; a cursor on it moves to the next. */
  function unlink(slot: number): void {
    const w = base(slot);
    const prev = words[w + S_PREV];
    const next = words[w + S_NEXT];
    if (prev === NONE) words[H_HEAD] = next;
    else words[base(prev) + S_NEXT] = next;
    if (next === NONE) words[H_TAIL] = prev;
    else words[base(next) + S_PREV] = prev;
    if (words[H_CURSOR] === slot) words[H_CURSOR] = next;
  }

  /** Moves the counter in `from` to the empty `to`, keeping its place in the list. */
  function move(from: number, to: number): void {
    const f = base(from);
    const t = base(to);
    for (let i = 0; i < SLOT_WORDS; i++) words[t + i] = words[f + i];
    const prev = words[t + S_PREV];
    const next = words[t + S_NEXT];
    if (prev === NONE) words[H_HEAD] = to;
    else words[base(prev) + S_NEXT] = to;
    if (next === NONE) words[H_TAIL] = to;
    else words[base(next) + S_PREV] = to;
    if (words[H_CURSOR] === from) words[H_CURSOR] = to;
  }

  function remove(slot: number): void {
    unlink(slot);
    Atomics.store(words, H_SIZE, words[H_SIZE] - 1);
    // Shifts back each later slot of the run that may sit in the hole: one whose home is not between hole and it.
    let hole = slot;
    for (let next = (hole + 1) & mask; words[base(next) + S_USED] !== 0; next = (next + 1) & mask) {
      const home = words[base(next) + S_HASH_A] & mask;
      const stays = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (stays) continue;
      move(next, hole);
      hole = next;
    }
    words[base(hole) + S_USED] = 0;
  }

  function sweep(at: number, steps: number): boolean {
    let dropped = false;
    for (let i = 0; i < steps; i++) {
      let slot = words[H_CURSOR];
      if (slot === NONE) {
        slot = words[H_HEAD];
        if (slot === NONE) return dropped;
      }
      words[H_CURSOR] = words[base(slot) + S_NEXT];
      if (doubles[(base(slot) + S_EXPIRES) >> 1] <= at) {
        remove(slot);
        dropped = true;
      }
    }
    return dropped;
  }

  return {
    maxKeys: words[H_MAX_KEYS],
    find,
    count: (slot) => doubles[(base(slot) + S_COUNT) >> 1],
    expiresAt: (slot) => doubles[(base(slot) + S_EXPIRES) >> 1],
    addHits(slot, hits) {
      doubles[(base(slot) + S_COUNT) >> 1] += hits;
    },
    insert,
    remove,
    oldest: () => words[H_HEAD],
    size: () => Atomics.load(words, H_SIZE),
    sweep,
  };
}
