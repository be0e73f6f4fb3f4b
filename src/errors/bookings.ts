/**
 * @module errors/bookings
 * The booking services' errors (src/bookings): the user, ids and bookings
 * a request names, the booking it asks for, `Idempotency-Key`, and a
 * database that is down or slow.
 */
import { defineErrors } from './define';

export const BOOKINGS_ERRORS = defineErrors({
  BOOKING_USER_MISSING: {
    status: 401,
    detail: 'bookings belong to a user: send the request through the gateway, with credentials',
  },
  BOOKING_USER_NOT_UTF8: { status: 400, detail: 'X-Travel-User must be a user name in UTF-8' },
  CATALOGUE_ITEM_NOT_FOUND: { status: 404, detail: 'no {kind} {id}', about: '`kind` is `hotel` or `car`' },
  BOOKING_ID_MALFORMED: { status: 404, detail: "'{id}' is not a {kind} booking id (a UUID)" },
  BOOKING_NOT_FOUND: { status: 404, detail: 'no {kind} booking {id}', about: "another user's too" },
  BOOKING_REQUEST_INVALID: {
    status: 400,
    detail: '{problems}',
    about:
      "each problem of the body, joined by `; `: `<field>: <what it must be>`, `unknown field 'x'; known fields: ...`, or `the request body must be a JSON object`",
  },
  BOOKING_START_PASSED: { status: 400, detail: '{field}: must not be in the past' },
  BOOKING_ITEM_UNKNOWN: { status: 400, detail: '{field}: no {kind} has the id {id}' },
  IDEMPOTENCY_KEY_REPEATED: { status: 400, detail: 'send one Idempotency-Key, not {count}' },
  IDEMPOTENCY_KEY_MALFORMED: {
    status: 400,
    detail:
      'Idempotency-Key must be 1 to {max} printable ASCII characters, bare or as a quoted string (a UUID is a good key)',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    detail: 'this Idempotency-Key was used for another booking request: send a new key for a new request',
  },
  IDEMPOTENCY_KEY_IN_FLIGHT: {
    status: 409,
    detail: 'a request with this Idempotency-Key is still being made: retry once it is answered',
    headers: { 'Retry-After': '1' },
  },
  BOOKINGS_UNAVAILABLE: {
    status: 503,
    detail: '{reason}: try again',
    headers: { 'Retry-After': '1' },
    about: '`reason` says what failed: the database is closed, did not answer in time...',
  },
});
