/**
 * @module gatehouse/folder/transfer
 * A checked folder sent from the worker thread in parts. A message is
 * copied into the receiving thread in one piece, while its event runs:
 * 30 000 Mappings in one message held the event loop for a third of a
 * second. In parts of {@link PART_ITEMS}, each sent once the one before was
 * taken (messages that wait in a port are all taken in one turn of the event
 * loop), requests are answered between them.
 */
import type { UserEntry } from '../../auth';
import type { BookingData } from '../../bookings';
import type { EmissaryRecordReport, GatewayRecord, MappingRecord, RecordSource, SkippedRecord } from '../../gateway';
import { createLimitTableBuilder, limitEntries, type LimitEntry } from '../../ratelimit';
import type { CheckedFolder } from './check';

/** Items in one message: a few milliseconds of copying each. */
export const PART_ITEMS = 500;

type BookingList = keyof BookingData;
const BOOKING_LISTS: readonly BookingList[] = ['hotels', 'cars', 'hotel_bookings', 'car_bookings'];

/** One message of the worker. */
export type Part =
  | { part: 'mappings'; items: [MappingRecord, RecordSource | undefined][] }
  | { part: 'users'; items: [string, UserEntry][] }
  | { part: 'limits'; items: LimitEntry[] }
  | { part: 'bookings'; list: BookingList; items: unknown[] }
  | { part: 'emissary'; items: EmissaryRecordReport[] }
  | { part: 'skipped'; items: SkippedRecord[] }
  | { done: CheckedFolder };

function* inParts<T>(items: Iterable<T>): Generator<T[]> {
  let part: T[] = [];
  for (const item of items) {
    part.push(item);
    if (part.length === PART_ITEMS) {
      yield part;
      part = [];
    }
  }
  if (part.length > 0) yield part;
}

/** The parts of `checked`: its long lists a part at a time, then the rest. */
export function* partsOf(checked: CheckedFolder): Generator<Part> {
  const rest: CheckedFolder = { ...checked };
  const config = checked.config;
  if (config) {
    const sources = config.recordSources;
    for (const items of inParts(config.mappings))
      yield { part: 'mappings', items: items.map((m) => [m, sources?.get(m)]) };
    // The other records keep their place in the map: a few, beside the Mappings.
    const others = new Map<GatewayRecord, RecordSource>();
    const tls = [...(config.hosts ?? []), ...(config.tlsContexts ?? []), ...(config.secrets ?? [])];
    for (const record of [config.authService, config.rateLimitService, config.module, ...tls]) {
      const source = record && sources?.get(record);
      if (record && source) others.set(record, source);
    }
    rest.config = { ...config, mappings: [], recordSources: others };
  }
  if (checked.limits) {
    const { table } = checked.limits;
    for (const items of inParts(limitEntries(table))) yield { part: 'limits', items };
    rest.limits = {
      ...checked.limits,
      table: { domains: new Map(), hasReplaces: table.hasReplaces, ruleCount: table.ruleCount },
    };
  }
  if (checked.users) {
    for (const items of inParts(checked.users.users)) yield { part: 'users', items };
    rest.users = { ...checked.users, users: new Map() };
  }
  if (checked.bookings) {
    const bookings = checked.bookings;
    for (const list of BOOKING_LISTS)
      for (const items of inParts(bookings[list] as Iterable<unknown>)) yield { part: 'bookings', list, items };
    rest.bookings = { hotels: [], cars: [], hotel_bookings: [], car_bookings: [] };
  }
  if (checked.emissary) {
    // A report of 30 000 Emissary Mappings is as long as their records.
    for (const items of inParts(checked.emissary.records)) yield { part: 'emissary', items };
    for (const items of inParts(checked.emissary.skipped)) yield { part: 'skipped', items };
    rest.emissary = { ...checked.emissary, records: [], skipped: [] };
  }
  yield { done: rest };
}

/** Puts the parts back together as they come; `add` gives the whole once the last part is in. */
export function createAssembler(): { add(part: Part): CheckedFolder | undefined } {
  const mappings: MappingRecord[] = [];
  const sources = new Map<GatewayRecord, RecordSource>();
  const users = new Map<string, UserEntry>();
  const limits = createLimitTableBuilder();
  const bookings: Record<BookingList, unknown[]> = { hotels: [], cars: [], hotel_bookings: [], car_bookings: [] };
  const emissary: EmissaryRecordReport[] = [];
  const skipped: SkippedRecord[] = [];
  return {
    add(part) {
      if ('done' in part) {
        const checked = part.done;
        const config = checked.config;
        if (config) {
          for (const [record, source] of config.recordSources ?? []) sources.set(record, source);
          config.mappings = mappings;
          if (sources.size > 0) config.recordSources = sources;
          else delete config.recordSources;
        }
        if (checked.users) checked.users = { ...checked.users, users };
        if (checked.limits)
          checked.limits = {
            ...checked.limits,
            table: limits.table(checked.limits.table.hasReplaces, checked.limits.table.ruleCount),
          };
        if (checked.bookings) checked.bookings = bookings as unknown as BookingData;
        if (checked.emissary) checked.emissary = { ...checked.emissary, records: emissary, skipped };
        return checked;
      }
      // Added as they come: a Map built at the end from 100 000 entries would be one long step.
      if (part.part === 'mappings') {
        for (const [mapping, source] of part.items) {
          mappings.push(mapping);
          if (source) sources.set(mapping, source);
        }
      } else if (part.part === 'limits') {
        for (const entry of part.items) limits.add(entry);
      } else if (part.part === 'emissary') {
        for (const item of part.items) emissary.push(item);
      } else if (part.part === 'skipped') {
        for (const item of part.items) skipped.push(item);
      } else if (part.part === 'users') {
        for (const [name, entry] of part.items) users.set(name, entry);
      } else {
        const list = bookings[part.list];
        for (const item of part.items) list.push(item);
      }
      return undefined;
    },
  };
}
