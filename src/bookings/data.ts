/**
 * @module bookings/data
 * The booking services' data file (`bookings.yaml` in the config folder): the
 * hotel and car catalogues and the bookings present at start, validated as a
 * whole so that a broken file is reported, never half-used.
 */
import path from 'node:path';
import {
  DEFAULT_FILE_SIZE_LIMIT,
  errorCode,
  errorText,
  yamlDocuments,
  YamlLimitError,
  readBoundedText,
  readBoundedTextSync,
  whyUnreadable,
} from '../files';
import type { Document } from 'yaml';
import { z } from 'zod';
import { BOOKING_KINDS, daySchema, KINDS, uuidSchema, type CatalogueItem, type KindSpec } from './kinds';
import type { Booking } from './types';

/** The name of the data file in a config folder. */
export const BOOKINGS_FILE = 'bookings.yaml';

/** The contents of a data file, by the file's keys. */
export interface BookingData {
  readonly hotels: readonly CatalogueItem[];
  readonly cars: readonly CatalogueItem[];
  readonly hotel_bookings: readonly Booking[];
  readonly car_bookings: readonly Booking[];
}

/** A data file that cannot be used; the message names the file and every problem in it. */
export class BookingDataError extends Error {
  /** `<path in the file>: <problem>`, one a problem. */
  readonly problems: readonly string[];
  constructor(
    readonly file: string,
    problems: readonly string[],
  ) {
    super(`${file}: ${problems.length === 1 ? problems[0] : `\n  ${problems.join('\n  ')}`}`);
    this.name = 'BookingDataError';
    this.problems = problems;
  }
}

const timestampSchema = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 timestamp' })
  .transform((t) => new Date(t).toISOString());

function bookingSchema(spec: KindSpec) {
  return z
    .strictObject({
      id: uuidSchema,
      user: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty'),
      [spec.itemField]: uuidSchema,
      [spec.startField]: daySchema,
      [spec.lengthField]: z.number({ error: 'must be a number' }).int('must be an integer').min(1).max(spec.maxLength),
      status: z.enum(['confirmed', 'cancelled'], { error: 'must be confirmed or cancelled' }).default('confirmed'),
      created_at: timestampSchema,
      cancelled_at: timestampSchema.optional(),
    })
    .superRefine((b, ctx) => {
      if (b.status === 'cancelled' && b.cancelled_at === undefined) {
        ctx.addIssue({ code: 'custom', path: ['cancelled_at'], message: 'is required when status is cancelled' });
      }
      if (b.status !== 'cancelled' && b.cancelled_at !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['cancelled_at'], message: 'is only allowed when status is cancelled' });
      }
    })
    .transform((b): Booking => ({
      id: b.id as string,
      itemId: b[spec.itemField] as string,
      user: b.user as string,
      status: b.status as Booking['status'],
      start: b[spec.startField] as string,
      length: b[spec.lengthField] as number,
      createdAt: b.created_at as string,
      ...(b.cancelled_at === undefined ? {} : { cancelledAt: b.cancelled_at as string }),
    }));
}

const list = <T extends z.ZodType>(item: T) => z.array(item, { error: 'must be a list' }).default([]);

const fileSchema = z.strictObject(
  {
    hotels: list(KINDS.hotel.catalogueSchema),
    cars: list(KINDS.car.catalogueSchema),
    hotel_bookings: list(bookingSchema(KINDS.hotel)),
    car_bookings: list(bookingSchema(KINDS.car)),
  },
  {
    error: (issue) =>
      issue.code === 'invalid_type'
        ? 'the file must hold a mapping (hotels, cars, hotel_bookings, car_bookings)'
        : undefined,
  },
);

/**
 * What the schema of one entry cannot see: ids repeated in a list, and
 * bookings of items missing from the catalogue.
 */
function crossCheck(data: BookingData): string[] {
  const problems: string[] = [];
  for (const kind of BOOKING_KINDS) {
    const spec = KINDS[kind];
    const items = new Set<string>();
    data[spec.catalogueKey].forEach((item, i) => {
      if (items.has(item.id))
        problems.push(`${spec.catalogueKey}[${i}].id: two ${spec.catalogueKey} have the id ${item.id}`);
      items.add(item.id);
    });
    const ids = new Set<string>();
    data[spec.bookingsKey].forEach((booking, i) => {
      if (ids.has(booking.id)) problems.push(`${spec.bookingsKey}[${i}].id: two bookings have the id ${booking.id}`);
      ids.add(booking.id);
      if (!items.has(booking.itemId)) {
        problems.push(
          `${spec.bookingsKey}[${i}].${spec.itemField}: no ${kind} in ${spec.catalogueKey} has the id ${booking.itemId}`,
        );
      }
    });
  }
  return problems;
}

/** `hotel_bookings[0].hotel_id` */
function pathText(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) out += typeof s === 'number' ? `[${s}]` : `${out ? '.' : ''}${String(s)}`;
  return out || '(top level)';
}

function problemText(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${pathText([...issue.path, key])}: unknown field`).join('; ');
  }
  return `${pathText(issue.path)}: ${issue.message}`;
}

/** Most aliases the data may use: each stands for a whole copy of what it names. */
const MAX_ALIAS_COUNT = 100;

/** What a text with no YAML document (empty, blank, only comments or `---`) parses to. */
const NOTHING = Symbol('no document');

/**
 * Parses the one document of a data file. A `---` before or after it, as
 * templating tools write, is no second document.
 */
function parseDocument(text: string, file: string): unknown {
  const values: unknown[] = [];
  try {
    for (const doc of yamlDocuments(text)) values.push(...documentValue(doc, file));
  } catch (err) {
    if (err instanceof YamlLimitError)
      throw new BookingDataError(file, [
        err.limit === 'aliases' ? `uses aliases more than ${MAX_ALIAS_COUNT} times: refused` : err.message,
      ]);
    throw err;
  }
  if (values.length > 1)
    throw new BookingDataError(file, [`holds ${values.length} YAML documents: write the data as one mapping`]);
  return values.length === 0 ? NOTHING : values[0];
}

/** The value of one document of a data file, or none for an empty one; its tree is not kept. */
function documentValue(doc: Document.Parsed, file: string): unknown[] {
  // The first error says where; those after it follow from it.
  if (doc.errors.length > 0)
    throw new BookingDataError(file, [`not valid YAML: ${doc.errors[0].message.split('\n', 1)[0].replace(/:$/, '')}`]);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    // Found only when the values are built: a file whose aliases expand without bound (a "billion laughs").
    const text = errorText(err);
    throw new BookingDataError(file, [
      /excessive alias count/i.test(text)
        ? `uses aliases more than ${MAX_ALIAS_COUNT} times: refused`
        : `not valid YAML: ${text}`,
    ]);
  }
  return value !== null && value !== undefined ? [value] : [];
}

function validate(raw: unknown, file: string): BookingData {
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) throw new BookingDataError(file, parsed.error.issues.map(problemText));
  const problems = crossCheck(parsed.data);
  if (problems.length) throw new BookingDataError(file, problems);
  return parsed.data;
}

/**
 * Validates the text of a data file. `file` is only used in error messages.
 * @throws {BookingDataError} naming the file and the path of every problem.
 */
export function parseBookingData(text: string, file = BOOKINGS_FILE): BookingData {
  const raw = parseDocument(text, file);
  // An empty text is an empty data set.
  return validate(raw === NOTHING ? {} : raw, file);
}

/**
 * Validates a data file as read. Unlike a text given in code, a file with no
 * document is refused: it is what a reload sees between the truncation and
 * the write of a file written in place, and would empty the catalogues.
 * @throws {BookingDataError} naming the file, whatever went wrong.
 */
export function parseBookingFile(text: string, file: string): BookingData {
  try {
    return parseBookingText(text, file);
  } catch (err) {
    if (err instanceof BookingDataError) throw err;
    throw new BookingDataError(file, [`cannot be read as booking data: ${errorText(err)}`]);
  }
}

function parseBookingText(text: string, file: string): BookingData {
  const raw = parseDocument(text, file);
  if (raw === NOTHING) {
    throw new BookingDataError(file, [
      'holds no YAML document (it is empty, or only comments): refused, since a file caught while it is being written would empty the catalogues; write `hotels: []` for no data',
    ]);
  }
  return validate(raw, file);
}

function readError(file: string, err: unknown): BookingDataError {
  const missing = errorCode(err) === 'ENOENT' && err instanceof Error && err.name !== 'BrokenLinkError';
  return new BookingDataError(file, [missing ? 'the file does not exist' : whyUnreadable(err)]);
}

/**
 * Reads (at most `fileSizeLimit` bytes) and validates `bookings.yaml` from a
 * config folder.
 * @throws {BookingDataError} naming the file and the path of every problem.
 */
export async function loadBookingData(
  configDir: string,
  fileSizeLimit: number = DEFAULT_FILE_SIZE_LIMIT,
): Promise<BookingData> {
  const file = path.join(configDir, BOOKINGS_FILE);
  let text: string;
  try {
    text = await readBoundedText(file, fileSizeLimit);
  } catch (err) {
    throw readError(file, err);
  }
  return parseBookingFile(text, file);
}

/** {@link loadBookingData}, synchronously: for building modules at start-up. */
export function loadBookingDataSync(configDir: string, fileSizeLimit: number = DEFAULT_FILE_SIZE_LIMIT): BookingData {
  const file = path.join(configDir, BOOKINGS_FILE);
  let text: string;
  try {
    text = readBoundedTextSync(file, fileSizeLimit);
  } catch (err) {
    throw readError(file, err);
  }
  return parseBookingFile(text, file);
}
