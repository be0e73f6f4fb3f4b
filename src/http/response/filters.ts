/**
 * @module http/response/filters
 * The types of collection filters: how the value of `?stars=4` or
 * `?hotel_id=<uuid>` is read, so that a value the field can never hold is a
 * 400 rather than an empty page, and a value spelled another way (`04`, an
 * upper-case UUID) finds what its usual spelling finds.
 */

/** How the value of one filter is read. */
export interface FilterType {
  /** What a value must be, as the 400 that refuses one says it: `an integer`, `a UUID`. */
  readonly expected: string;
  /** The value as the items spell it (`04` is `4`), or `undefined` when the field can never hold it. */
  read(value: string): string | undefined;
}

const INTEGER = /^-?[0-9]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** A whole number, written in decimal. */
const integer: FilterType = {
  expected: 'an integer',
  read(value) {
    if (!INTEGER.test(value)) return undefined;
    const n = Number(value);
    return Number.isSafeInteger(n) ? String(n) : undefined;
  },
};

/** A UUID in any case; items spell theirs in lower case. */
const uuid: FilterType = {
  expected: 'a UUID',
  read: (value) => (UUID.test(value) ? value.toLowerCase() : undefined),
};

/** A day of the calendar, `YYYY-MM-DD`. */
const day: FilterType = {
  expected: 'a date (YYYY-MM-DD)',
  read(value) {
    if (!DAY.test(value)) return undefined;
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value) ? value : undefined;
  },
};

/** One of `values`, spelled exactly so. */
function oneOf(values: readonly string[]): FilterType {
  return {
    expected: `one of ${values.join(', ')}`,
    read: (value) => (values.includes(value) ? value : undefined),
  };
}

/** The filter types collections use; a filterable field without one is compared as written. */
export const filterTypes = Object.freeze({ integer, uuid, day, oneOf });
