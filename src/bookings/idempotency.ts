/**
 * @module bookings/idempotency
 * `Idempotency-Key` on booking requests, as Stripe and the IETF draft
 * (httpapi-idempotency-key-header) define it: the header read and checked,
 * and the errors a store answers a reused key with.
 */
import { ERRORS, HttpError, repeatedHeader } from '../http';
import type { Booking, BookingDraft } from './types';

/** The header, as sent. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

const IDEMPOTENCY_KEY_LOWER = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** The longest key taken, in characters: Stripe's limit. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

// The draft's Structured Field String: printable ASCII in quotes, `\"` and `\\` escaped.
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
// Stripe's form, unquoted: visible ASCII, no space (two keys joined by a comma and a space are refused).
const TOKEN = /^[\x21-\x7e]+$/;

/**
 * The key of a request's `Idempotency-Key`, or `undefined` without one.
 * Both spellings are taken: the draft's quoted string (`"8e03978e-..."`)
 * and Stripe's bare value (`8e03978e-...`), naming the same key.
 * @param rawHeaders the request's header lines: two lines of the header are refused, not joined.
 * @throws {HttpError} 400 for two headers, an empty or malformed value, or one past 255 characters.
 */
export function idempotencyKeyOf(rawHeaders: readonly string[]): string | undefined {
  const repeated = repeatedHeader(rawHeaders, IDEMPOTENCY_KEY_LOWER);
  if (repeated !== undefined) throw HttpError.of('IDEMPOTENCY_KEY_REPEATED', { count: repeated.length });
  let raw: string | undefined;
  for (let i = 0; i < rawHeaders.length && raw === undefined; i += 2) {
    if (rawHeaders[i].length === IDEMPOTENCY_KEY_LOWER.length && rawHeaders[i].toLowerCase() === IDEMPOTENCY_KEY_LOWER)
      raw = rawHeaders[i + 1];
  }
  if (raw === undefined) return undefined;
  const value = raw.trim();
  let key: string | undefined;
  if (value.startsWith('"')) key = SF_STRING.exec(value)?.[1]?.replace(/\\(["\\])/g, '$1');
  else if (TOKEN.test(value)) key = value;
  if (key === undefined || key === '' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw HttpError.of('IDEMPOTENCY_KEY_MALFORMED', { max: MAX_IDEMPOTENCY_KEY_LENGTH });
  }
  return key;
}

/** Whether `booking` is what `draft` asks for: the test a key's second use must pass. */
export function sameRequest(booking: Booking, draft: BookingDraft): boolean {
  return booking.itemId === draft.itemId && booking.start === draft.start && booking.length === draft.length;
}

/** A key used again with another request: the draft's 422. */
export class IdempotencyKeyReused extends Error {
  constructor(readonly key: string) {
    super(ERRORS.IDEMPOTENCY_KEY_REUSED.detail);
    this.name = 'IdempotencyKeyReused';
  }
}

/** A key whose first request is still being made: the draft's 409. */
export class IdempotencyKeyInFlight extends Error {
  constructor(readonly key: string) {
    super(ERRORS.IDEMPOTENCY_KEY_IN_FLIGHT.detail);
    this.name = 'IdempotencyKeyInFlight';
  }
}
