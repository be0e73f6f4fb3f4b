/**
 * @module bookings/types
 * What a booking is, shared by the stores, the app and the idempotency
 * checks: the booking as stored, what a user asks for, and its statuses.
 */
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
