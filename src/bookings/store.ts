/**
 * @module bookings/store
 * Where bookings live: the {@link BookingStore} interface, which keeps every
 * booking to its owner, and the in-memory store used by default.
 */
import { randomUUID } from 'node:crypto';

/** `confirmed` when made, `cancelled` once cancelled; there is no way back. */
export type BookingStatus = 'confirmed' | 'cancelled';

/** Every {@link BookingStatus}. */
export const BOOKING_STATUSES: readonly BookingStatus[] = Object.freeze(['confirmed', 'cancelled']);

/** A booking as it is stored, whatever its kind. */
export interface Booking {
  /** A lower-case UUID. */
  readonly id: string;
  /** The booked hotel or car. */
  readonly itemId: string;
  /** The user who made it; nobody else can see it. */
  readonly user: string;
  readonly status: BookingStatus;
  /** The first day, `YYYY-MM-DD`. */
  readonly start: string;
  /** Nights or days. */
  readonly length: number;
  /** ISO 8601 timestamps. */
  readonly createdAt: string;
  readonly cancelledAt?: string;
}

/** What a user asks for when booking. */
export interface BookingDraft {
  readonly itemId: string;
  readonly user: string;
  readonly start: string;
  readonly length: number;
}

/**
 * Storage of the bookings of one kind. Every read and write names the user,
 * so that a store never hands out another user's booking: for anybody but
 * its owner a booking does not exist.
 */
export interface BookingStore {
  /** The user's booking with this id, or `undefined`. */
  get(user: string, id: string): Promise<Booking | undefined>;
  /** The user's bookings, oldest first. */
  list(user: string): Promise<Booking[]>;
  /**
   * Stores a new, confirmed booking under a fresh id. Atomic: concurrent
   * creates each get their own booking and none is lost.
   */
  create(draft: BookingDraft): Promise<Booking>;
  /**
   * Cancels the user's booking and returns it; a cancelled booking stays
   * cancelled and is returned unchanged. `undefined` when the user has no
   * booking with this id.
   */
  cancel(user: string, id: string): Promise<Booking | undefined>;
}

export interface MemoryBookingStoreOptions {
  /** Bookings present from the start (the demo data). */
  bookings?: readonly Booking[];
  /** The clock, for `createdAt` and `cancelledAt`. */
  now?: () => Date;
  /** Makes ids; must return lower-case UUIDs. */
  newId?: () => string;
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
    async create(draft) {
      let id = newId();
      // A repeated id would overwrite someone's booking; a fresh one costs nothing.
      for (let tries = 1; byId.has(id); tries++) {
        if (tries >= 5) throw new Error('the id generator keeps returning ids that are taken');
        id = newId();
      }
      return put({
        id,
        itemId: draft.itemId,
        user: draft.user,
        status: 'confirmed',
        start: draft.start,
        length: draft.length,
        createdAt: now().toISOString(),
      });
    },
    async cancel(user, id) {
      const booking = owned(user, id);
      if (!booking || booking.status === 'cancelled') return booking;
      return put({ ...booking, status: 'cancelled', cancelledAt: now().toISOString() });
    },
  };
}
