/**
 * @module bookings/request
 * The body of a booking request (`POST .../bookings/`), validated strictly:
 * every problem is a 400 that names the field.
 */
import { z } from 'zod';
import { HttpError } from '../http';
import { daySchema, uuidSchema, type KindSpec } from './kinds';

/** A validated booking request, before the item is looked up. */
export interface BookingRequest {
  itemId: string;
  start: string;
  length: number;
}

const required = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

const TWELVE_HOURS = 12 * 3_600_000;

/**
 * The earliest day that is still today somewhere, `YYYY-MM-DD`: the day in
 * UTC−12, the last time zone to leave a date. A booking from a client far
 * west of UTC is not refused for starting "yesterday" in UTC.
 */
export function earliestBookableDay(now: Date): string {
  return new Date(now.getTime() - TWELVE_HOURS).toISOString().slice(0, 10);
}

/**
 * Throws the 400 of a request for a new booking whose start has passed by
 * `now` (see {@link earliestBookableDay}). Asked only of a booking about to
 * be made: a retry of one made already is answered with it, however late.
 */
export function refusePastStart(spec: KindSpec, request: BookingRequest, now: Date): void {
  // Days in YYYY-MM-DD compare as text.
  if (request.start < earliestBookableDay(now)) throw HttpError.of('BOOKING_START_PASSED', { field: spec.startField });
}

/**
 * Builds the validator of a kind's booking requests:
 * `{<item>_id: UUID, <start>: YYYY-MM-DD, <length>?: 1..max (default 1)}`,
 * and no other field. Whether the start has passed is asked of a new
 * booking only ({@link refusePastStart}).
 */
export function bookingRequestParser(spec: KindSpec): (body: unknown) => BookingRequest {
  const schema = z.strictObject(
    {
      [spec.itemField]: z.string({ error: required('a string') }).pipe(uuidSchema),
      [spec.startField]: z.string({ error: required('a date (YYYY-MM-DD)') }).pipe(daySchema),
      [spec.lengthField]: z
        .number({ error: required('a number') })
        // Not .int(), which takes a whole number past 2^53 for a fraction.
        .multipleOf(1, 'must be a whole number')
        .min(1, 'must be at least 1')
        .max(spec.maxLength, `must be at most ${spec.maxLength}`)
        .default(1),
    },
    { error: (issue) => (issue.code === 'invalid_type' ? 'the request body must be a JSON object' : undefined) },
  );
  const fields = [spec.itemField, spec.startField, spec.lengthField].join(', ');

  return (body) => {
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => {
        if (issue.code === 'unrecognized_keys') {
          return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')}; known fields: ${fields}`;
        }
        return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
      });
      throw HttpError.of('BOOKING_REQUEST_INVALID', { problems: problems.join('; ') });
    }
    const data = parsed.data as Record<string, string | number>;
    return {
      itemId: data[spec.itemField] as string,
      start: data[spec.startField] as string,
      length: data[spec.lengthField] as number,
    };
  };
}
