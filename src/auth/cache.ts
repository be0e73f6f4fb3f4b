/**
 * @module auth/cache
 * A small least-recently-used map whose entries expire, and say when they
 * are due for renewal: the verified credentials cache. Hand-written because
 * it needs only get, set and clear, and a hit must cost one Map lookup and a
 * clock read.
 */

interface Slot<V> {
  value: V;
  expires: number;
  /** When a hit makes it due for renewal; Infinity once a hit has claimed that. */
  renewAt: number;
}

/** Options of {@link TtlLru}. */
export interface TtlLruOptions {
  /** The most entries kept; the least recently used goes first. */
  max: number;
  /** How long an entry lives after it was set, in milliseconds. */
  ttlMs: number;
  /**
   * How long after it was set an entry's next hit marks it due for renewal
   * ({@link TtlLru.hitDue}), in milliseconds: once, so that whoever renews
   * it sets it again before it expires, while it is still served. Default:
   * never.
   */
  renewAfterMs?: number;
  /** The clock, in milliseconds; injectable for tests. */
  now?: () => number;
}

/** A bounded LRU map whose entries expire `ttlMs` after they were set. */
export class TtlLru<K, V> {
  private readonly slots = new Map<K, Slot<V>>();
  private readonly max: number;
  private readonly ttlMs: number;
  private readonly renewAfterMs: number;
  private readonly now: () => number;
  /** The most recently used key, when known: a hit on it is already in its place. */
  private youngest: K | undefined;
  /**
   * Whether the last {@link get} was a hit that made its entry due for
   * renewal: true once per entry set, for the first hit past `renewAfterMs`.
   * Read right after `get`, it costs the hit nothing more.
   */
  hitDue = false;

  constructor(options: TtlLruOptions) {
    if (!(options.max >= 0) || !(options.ttlMs >= 0)) throw new RangeError('max and ttlMs must be non-negative');
    this.max = options.max;
    this.ttlMs = options.ttlMs;
    this.renewAfterMs = options.renewAfterMs ?? Infinity;
    this.now = options.now ?? Date.now;
  }

  /**
   * The live entry for `key`, made the most recently used; undefined when
   * absent or expired. Sets {@link hitDue}.
   */
  get(key: K): V | undefined {
    this.hitDue = false;
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    const now = this.now();
    if (slot.expires <= now) {
      this.slots.delete(key);
      if (key === this.youngest) this.youngest = undefined;
      return undefined;
    }
    if (slot.renewAt <= now) {
      slot.renewAt = Infinity;
      this.hitDue = true;
    }
    // Map keeps insertion order: re-inserting moves the key to the young end,
    // where the key of the last hit or set already is (a client's next request).
    if (key !== this.youngest) {
      this.slots.delete(key);
      this.slots.set(key, slot);
      this.youngest = key;
    }
    return slot.value;
  }

  set(key: K, value: V): void {
    if (this.max === 0 || this.ttlMs === 0) return;
    this.slots.delete(key);
    const now = this.now();
    this.slots.set(key, { value, expires: now + this.ttlMs, renewAt: now + this.renewAfterMs });
    this.youngest = key;
    if (this.slots.size > this.max) {
      const oldest = this.slots.keys().next();
      if (!oldest.done) this.slots.delete(oldest.value);
    }
  }

  clear(): void {
    this.slots.clear();
    this.youngest = undefined;
  }

  get size(): number {
    return this.slots.size;
  }
}
