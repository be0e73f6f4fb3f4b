/**
 * @module bookings/store
 * Where bookings live: the {@link BookingStore} interface, which keeps every
 * booking to its owner, the errors every store answers with, and the
 * in-memory store for tests and embedding.
 */
import { randomUUID } from 'node:crypto';
import { IdempotencyKeyReused, sameRequest } from './idempotency';
import type { Booking, BookingDraft } from './types';
import type { TraceParent } from '../tracing';

/** What any call may carry besides its arguments. */
export interface CallOptions {
  /** The request's trace: a store that calls a database opens a span of it for the call. */
  readonly trace?: TraceParent;
}

/** What a create may carry besides the draft. */
export interface CreateOptions extends CallOptions {
  /**
   * The client's `Idempotency-Key`: a create retried with the same key (by
   * the same user, within {@link IDEMPOTENCY_KEY_TTL_MS}) returns the booking
   * the first one made instead of making another.
   */
  readonly idempotencyKey?: string;
  /**
   * Checks a booking about to be made (its start not past, its item in the
   * catalogue), throwing to refuse it: asked once no earlier booking of the
   * key is found, so that a retry is answered with the booking its first
   * try made whatever has changed since.
   */
  readonly admit?: () => void;
}

/** What a create did. */
export interface Created {
  readonly booking: Booking;
  /** True when an earlier create with the same `Idempotency-Key` made the booking. */
  readonly replayed: boolean;
}

/** How long an `Idempotency-Key` is remembered after the create that used it: 24 hours, as Stripe keeps them. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;

/**
 * Storage of the bookings of one kind. Every read and write names the user,
 * so that a store never hands out another user's booking: for anybody but
 * its owner a booking does not exist.
 */
export interface BookingStore {
  /** The user's booking with this id, or `undefined`. */
  get(user: string, id: string, options?: CallOptions): Promise<Booking | undefined>;
  /** The user's bookings, oldest first. */
  list(user: string, options?: CallOptions): Promise<Booking[]>;
  /**
   * Stores a new, confirmed booking under a fresh id. Atomic: concurrent
   * creates each get their own booking and none is lost. With an
   * `idempotencyKey` the user used before for the same request, it returns
   * that booking (`replayed`); for another request it rejects with
   * {@link IdempotencyKeyReused}, and while the first is still being made,
   * with {@link IdempotencyKeyInFlight}.
   */
  create(draft: BookingDraft, options?: CreateOptions): Promise<Created>;
  /**
   * Cancels the user's booking and returns it; a cancelled booking stays
   * cancelled and is returned unchanged. `undefined` when the user has no
   * booking with this id.
   */
  cancel(user: string, id: string, options?: CallOptions): Promise<Booking | undefined>;
}

export interface MemoryBookingStoreOptions {
  /** Bookings present from the start (the demo data). */
  bookings?: readonly Booking[];
  /** The clock, for `createdAt` and `cancelledAt`. */
  now?: () => Date;
  /** Makes ids; must return lower-case UUIDs. */
  newId?: () => string;
  /** How long an `Idempotency-Key` is remembered. Default {@link IDEMPOTENCY_KEY_TTL_MS}. */
  idempotencyKeyTtlMs?: number;
}

/**
 * A store in this process's memory: fast, and gone on restart. Creating is a
 * synchronous step between awaits, so concurrent requests cannot interleave
 * inside it.
 */
export function createMemoryBookingStore(options: MemoryBookingStoreOptions = {}): BookingStore {
  const now = options.now ?? (() => new Date());
  const newId = options.newId ?? randomUUID;
  const byId = new Map<string, Booking>();
  // Ids per user in creation order, so that a list costs the user's bookings only.
  const byUser = new Map<string, string[]>();
  const keyTtlMs = options.idempotencyKeyTtlMs ?? IDEMPOTENCY_KEY_TTL_MS;
  // By user, then key: the booking a key made, and when.
  const keys = new Map<string, Map<string, { id: string; at: number }>>();
  let sweptAt = 0;

  /** Forgets the keys past their time, at most once a minute: the map holds a day of keys, not every key ever sent. */
  function sweepKeys(at: number): void {
    if (at - sweptAt < 60_000) return;
    sweptAt = at;
    for (const [user, byKey] of keys) {
      for (const [key, entry] of byKey) if (at - entry.at >= keyTtlMs) byKey.delete(key);
      if (byKey.size === 0) keys.delete(user);
    }
  }

  function put(booking: Booking): Booking {
    const stored = Object.freeze({ ...booking });
    const isNew = !byId.has(stored.id);
    byId.set(stored.id, stored);
    if (isNew) {
      const ids = byUser.get(stored.user);
      if (ids) ids.push(stored.id);
      else byUser.set(stored.user, [stored.id]);
    }
    return stored;
  }

  function owned(user: string, id: string): Booking | undefined {
    const booking = byId.get(id.toLowerCase());
    return booking && booking.user === user ? booking : undefined;
  }

  for (const booking of options.bookings ?? []) {
    if (byId.has(booking.id)) throw new Error(`two bookings have the id ${booking.id}`);
    put(booking);
  }

  return {
    async get(user, id) {
      return owned(user, id);
    },
    async list(user) {
      return (byUser.get(user) ?? []).map((id) => byId.get(id)!);
    },
    async create(draft, createOptions = {}) {
      const at = now();
      const key = createOptions.idempotencyKey;
      sweepKeys(at.getTime());
      if (key !== undefined) {
        const earlier = keys.get(draft.user)?.get(key);
        const made = earlier && at.getTime() - earlier.at < keyTtlMs ? byId.get(earlier.id) : undefined;
        if (made) {
          if (!sameRequest(made, draft)) throw new IdempotencyKeyReused(key);
          return { booking: made, replayed: true };
        }
      }
      createOptions.admit?.();
      let id = newId();
      // A repeated id would overwrite someone's booking; a fresh one costs nothing.
      for (let tries = 1; byId.has(id); tries++) {
        if (tries >= 5) throw new Error('the id generator keeps returning ids that are taken');
        id = newId();
      }
      const booking = put({
        id,
        itemId: draft.itemId,
        user: draft.user,
        status: 'confirmed',
        start: draft.start,
        length: draft.length,
        createdAt: at.toISOString(),
      });
      if (key !== undefined) {
        let byKey = keys.get(draft.user);
        if (!byKey) keys.set(draft.user, (byKey = new Map<string, { id: string; at: number }>()));
        byKey.set(key, { id, at: at.getTime() });
      }
      return { booking, replayed: false };
    },
    async cancel(user, id) {
      const booking = owned(user, id);
      if (!booking || booking.status === 'cancelled') return booking;
      return put({ ...booking, status: 'cancelled', cancelledAt: now().toISOString() });
    },
  };
}
