/**
 * @module ratelimit/shared/layout
 * The shared counters' memory: one SharedArrayBuffer holding a header and an
 * open-addressing hash table of fixed-size slots, and the handle that carries
 * it to other threads. Every thread that holds the handle sees the same
 * counters; no field outside the lock word is touched without the lock.
 *
 * Header (Int32 words): the lock, its waiters, a format mark, the slot count,
 * maxKeys, the counters held, the oldest and newest slot of the insertion
 * list, the sweep cursor and the hash secret.
 *
 * Slot (40 bytes): in use or empty, the key's two hash words, the previous and
 * next slot in insertion order (the order memory-store's Map keeps, so both
 * stores drop the same counter when full), then the expiry in ms and the
 * count as doubles, as exact as memory-store's numbers.
 */
import { randomFillSync } from 'node:crypto';

/** What {@link createSharedCounters} hands out: plain data, for `workerData` or `postMessage`. */
export interface SharedCounters {
  /** The header and the table. */
  readonly buffer: SharedArrayBuffer;
  /** Most counters kept at once. */
  readonly maxKeys: number;
}

/** Options of {@link createSharedCounters}. */
export interface SharedCountersOptions {
  /** Most counters kept at once (default 100 000, as memory-store): expired ones go first, then the oldest. */
  maxKeys?: number;
}

/** The largest `maxKeys`: its table takes 40 bytes × 2²⁵ slots, 1.25 GiB. */
export const MAX_SHARED_KEYS = 1 << 24;
const DEFAULT_MAX_KEYS = 100_000;

export const H_LOCK = 0;
export const H_WAITERS = 1;
const H_MARK = 2;
export const H_SLOTS = 3;
export const H_MAX_KEYS = 4;
export const H_SIZE = 5;
export const H_HEAD = 6;
export const H_TAIL = 7;
export const H_CURSOR = 8;
export const H_SECRET0 = 9;
export const H_SECRET1 = 10;
/** Header words: 16, so that the first slot's doubles are 8-byte aligned. */
export const HEADER_WORDS = 16;

export const S_USED = 0;
export const S_HASH_A = 1;
export const S_HASH_B = 2;
export const S_PREV = 3;
export const S_NEXT = 4;
/** Word of the expiry double; the count's is 2 words on. */
export const S_EXPIRES = 6;
export const S_COUNT = 8;
export const SLOT_WORDS = 10;

/** No slot: the end of the insertion list, or a cursor past the newest counter. */
export const NONE = -1;

/** Marks a buffer laid out by this module ("GHc1"), so a stray one is refused. */
const MARK = 0x47486331;

/** Counters shared by the threads of this process, up to `maxKeys` of them. */
export function createSharedCounters(options: SharedCountersOptions = {}): SharedCounters {
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  if (!Number.isInteger(maxKeys) || maxKeys < 1 || maxKeys > MAX_SHARED_KEYS) {
    throw new RangeError(`maxKeys must be a whole number from 1 to ${MAX_SHARED_KEYS}, got ${maxKeys}`);
  }
  // At most half full: linear probing then looks at about two slots to find a counter, or its absence.
  let slots = 8;
  while (slots < 2 * maxKeys) slots *= 2;
  const buffer = new SharedArrayBuffer((HEADER_WORDS + slots * SLOT_WORDS) * 4);
  const words = new Int32Array(buffer);
  words[H_MARK] = MARK;
  words[H_SLOTS] = slots;
  words[H_MAX_KEYS] = maxKeys;
  words[H_HEAD] = NONE;
  words[H_TAIL] = NONE;
  words[H_CURSOR] = NONE;
  randomFillSync(words.subarray(H_SECRET0, H_SECRET1 + 1));
  return { buffer, maxKeys };
}

/** The handle's buffer as words, after checking that it is one {@link createSharedCounters} made. */
export function sharedWords(handle: SharedCounters): Int32Array {
  const buffer = (handle as Partial<SharedCounters> | undefined)?.buffer;
  if (!(buffer instanceof SharedArrayBuffer) || buffer.byteLength < HEADER_WORDS * 4) {
    throw new TypeError('shared counters: expected the handle createSharedCounters() returned');
  }
  const words = new Int32Array(buffer);
  const slots = words[H_SLOTS];
  if (words[H_MARK] !== MARK || buffer.byteLength !== (HEADER_WORDS + slots * SLOT_WORDS) * 4) {
    throw new TypeError('shared counters: the buffer is not one createSharedCounters() laid out');
  }
  return words;
}
