/**
 * @module bookings/kinds
 * What tells the hotel booking service from the car booking service: names of
 * fields, paths and catalogue entries. Everything else is one implementation.
 */
import { z } from 'zod';
import { filterTypes, type FilterType } from '../http';

/** The kinds of item that can be booked. */
export type BookingKind = 'hotel' | 'car';

export const BOOKING_KINDS: readonly BookingKind[] = ['hotel', 'car'];

/** A valid UUID, spelled in lower case. */
export const uuidSchema = z.uuid({ error: 'must be a UUID' }).transform((id) => id.toLowerCase());

/** A calendar day, `YYYY-MM-DD`, that exists. */
export const daySchema = z
  .string({ error: 'must be a date (YYYY-MM-DD)' })
  // Text that is no date at all is not also "not a day of the calendar".
  .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, { error: 'must be a date (YYYY-MM-DD)', abort: true })
  .refine((day) => {
    const date = new Date(`${day}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(day);
  }, 'is not a day of the calendar');

const text = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty');

/** The whole numbers a catalogue's number field holds: its schema and its filter say the same. */
interface IntegerRange {
  readonly min: number;
  readonly max: number;
}

const STARS: IntegerRange = { min: 1, max: 5 };
const SEATS: IntegerRange = { min: 1, max: 9 };

const countSchema = ({ min, max }: IntegerRange) =>
  z.number({ error: 'must be a number' }).int('must be an integer').min(min).max(max);

/**
 * The filter of a number field: the integers it can hold, a 400 naming that
 * range for anything else. The range, not "an integer": a value too large
 * for a number (`?stars=99999999999999999999`) is an integer all the same,
 * and one out of range (`?stars=7`) could find nothing.
 */
function integerIn({ min, max }: IntegerRange): FilterType {
  return {
    expected: `an integer from ${min} to ${max}`,
    read(value) {
      const n = filterTypes.integer.read(value);
      return n !== undefined && Number(n) >= min && Number(n) <= max ? n : undefined;
    },
  };
}

const hotelSchema = z.strictObject({
  id: uuidSchema,
  name: text,
  city: text,
  stars: countSchema(STARS),
});

const carSchema = z.strictObject({
  id: uuidSchema,
  model: text,
  city: text,
  seats: countSchema(SEATS),
});

/** An entry of a catalogue: a hotel or a car. */
export interface CatalogueItem {
  readonly id: string;
  readonly city: string;
  readonly [field: string]: string | number;
}

/** Everything that differs between the kinds. */
export interface KindSpec {
  readonly kind: BookingKind;
  /** The module's name, as a gateway Mapping's `service` spells it. */
  readonly moduleName: 'hotel-booking' | 'car-booking';
  /** Where the module answers by default: the path as the demo gateway forwards it. */
  readonly defaultBasePath: string;
  /** The booked item's field in a booking: `hotel_id`, `car_id`. */
  readonly itemField: string;
  /** The first day of a booking: `check_in`, `pick_up`. */
  readonly startField: string;
  /** How long a booking lasts: `nights`, `days`. */
  readonly lengthField: string;
  /** The longest booking accepted, in {@link lengthField} units. */
  readonly maxLength: number;
  /** The catalogue's key in the data file, and the collection's plural noun. */
  readonly catalogueKey: 'hotels' | 'cars';
  /** The bookings' key in the data file. */
  readonly bookingsKey: 'hotel_bookings' | 'car_bookings';
  /** Validates one catalogue entry of the data file. */
  readonly catalogueSchema: z.ZodType<CatalogueItem, unknown>;
  /** Every field of a catalogue entry, as it is sent (with `url`). */
  readonly catalogueFields: readonly string[];
  /** The catalogue fields a list may be filtered on. */
  readonly catalogueFilters: readonly string[];
  /** The types of the catalogue filters that are not plain text. */
  readonly catalogueFilterTypes: Readonly<Record<string, FilterType>>;
}

const fieldsOf = (schema: z.ZodObject) => [...Object.keys(schema.shape), 'url'];

export const KINDS: Readonly<Record<BookingKind, KindSpec>> = {
  hotel: {
    kind: 'hotel',
    moduleName: 'hotel-booking',
    defaultBasePath: '/v1/hotels',
    itemField: 'hotel_id',
    startField: 'check_in',
    lengthField: 'nights',
    maxLength: 30,
    catalogueKey: 'hotels',
    bookingsKey: 'hotel_bookings',
    catalogueSchema: hotelSchema,
    catalogueFields: fieldsOf(hotelSchema),
    catalogueFilters: ['name', 'city', 'stars'],
    catalogueFilterTypes: { stars: integerIn(STARS) },
  },
  car: {
    kind: 'car',
    moduleName: 'car-booking',
    defaultBasePath: '/v1/cars',
    itemField: 'car_id',
    startField: 'pick_up',
    lengthField: 'days',
    maxLength: 30,
    catalogueKey: 'cars',
    bookingsKey: 'car_bookings',
    catalogueSchema: carSchema,
    catalogueFields: fieldsOf(carSchema),
    catalogueFilters: ['model', 'city', 'seats'],
    catalogueFilterTypes: { seats: integerIn(SEATS) },
  },
};

/** The spec of a kind; throws on anything else, for callers outside TypeScript. */
export function kindSpec(kind: BookingKind): KindSpec {
  const spec = (KINDS as Record<string, KindSpec | undefined>)[kind];
  if (!spec) throw new Error(`unknown booking kind '${String(kind)}'; known kinds: ${BOOKING_KINDS.join(', ')}`);
  return spec;
}
