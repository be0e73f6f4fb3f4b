/**
 * @module http/response/collection
 * Query arguments of collection resources: `offset`/`limit` pagination,
 * `fields` partial responses and equality filters, each refused with an error
 * of its own; and the page they select, with its `next` link.
 */
import type { Context } from 'koa';
import type { ParsedUrlQuery } from 'node:querystring';
import { HttpError } from '../../errors';
import type { FilterType } from './filters';
import { scalarText } from './formatters';
import { absoluteUrl } from '../request/urls';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

/** What a collection declares about its items. */
export interface CollectionSpec {
  /** Every field an item may have; `fields=` may name only these. */
  readonly fields: readonly string[];
  /** The fields that other query arguments may filter on, by equality. */
  readonly filterable: readonly string[];
  /**
   * How the value of a filter is read, by field (see `filterTypes`): a value
   * the field can never hold is a 400. A field without one is compared as written.
   */
  readonly filterTypes?: Readonly<Record<string, FilterType>>;
}

/** A validated collection query. */
export interface ListQuery {
  offset: number;
  limit: number;
  /** Only these fields in each item, when given. */
  fields?: string[];
  /** Field name to required value. */
  filters: Record<string, string>;
}

/** A page of a collection, as it is sent. */
export interface Page<T> {
  items: T[];
  offset: number;
  limit: number;
  total: number;
  next?: string;
}

const RESERVED = new Set(['offset', 'limit', 'fields']);

const NON_NEGATIVE = /^[0-9]+$/;
const POSITIVE = /^0*[1-9][0-9]*$/;

/** The one value of query argument `name`, if given; a 400 when it is given twice. */
function once(query: ParsedUrlQuery, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw HttpError.of('QUERY_ARGUMENT_REPEATED', { name });
}

function readOffset(query: ParsedUrlQuery): number {
  const text = once(query, 'offset');
  if (text === undefined) return 0;
  if (!NON_NEGATIVE.test(text)) throw HttpError.of('OFFSET_NOT_INTEGER');
  const offset = Number(text);
  if (!Number.isSafeInteger(offset)) throw HttpError.of('OFFSET_TOO_LARGE');
  return offset;
}

function readLimit(query: ParsedUrlQuery): number {
  const text = once(query, 'limit');
  if (text === undefined) return DEFAULT_LIMIT;
  // A limit of 0 would give a next link pointing at the same page, forever.
  if (!POSITIVE.test(text)) throw HttpError.of('LIMIT_NOT_INTEGER');
  // Any larger one is capped, however many digits it has.
  return Math.min(Number(text), MAX_LIMIT);
}

/**
 * Validates the query of a collection request. Throws a 400 naming the
 * argument and what is wrong with it.
 */
export function parseListQuery(query: ParsedUrlQuery, spec: CollectionSpec): ListQuery {
  const offset = readOffset(query);
  const limit = readLimit(query);
  const selected = parseFields(once(query, 'fields'), spec.fields);

  const filters: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (RESERVED.has(name)) continue;
    if (!spec.filterable.includes(name)) {
      if (spec.filterable.length === 0) throw HttpError.of('QUERY_ARGUMENT_UNKNOWN', { name });
      throw HttpError.of('FILTER_UNKNOWN', { name, filterable: spec.filterable.join(', ') });
    }
    if (typeof value !== 'string') throw HttpError.of('QUERY_ARGUMENT_REPEATED', { name });
    const type =
      spec.filterTypes !== undefined && Object.hasOwn(spec.filterTypes, name) ? spec.filterTypes[name] : undefined;
    if (type === undefined) {
      filters[name] = value;
      continue;
    }
    const read = type.read(value);
    if (read === undefined) throw HttpError.of('FILTER_VALUE_INVALID', { name, expected: type.expected });
    filters[name] = read;
  }

  return { offset, limit, fields: selected, filters };
}

/**
 * Validates the query of a single-item request: only `fields` is allowed.
 * Throws a 400 naming what is wrong.
 */
export function parseItemQuery(query: ParsedUrlQuery, spec: Pick<CollectionSpec, 'fields'>): Pick<ListQuery, 'fields'> {
  for (const name in query) {
    if (name !== 'fields') throw HttpError.of('QUERY_ARGUMENT_UNKNOWN', { name });
  }
  return { fields: parseFields(once(query, 'fields'), spec.fields) };
}

function parseFields(fields: string | undefined, known: readonly string[]): string[] | undefined {
  if (fields === undefined) return undefined;
  const selected = fields.split(',').map((f) => f.trim());
  for (const field of selected) {
    if (field === '') throw HttpError.of('FIELDS_MALFORMED');
    if (!known.includes(field)) throw HttpError.of('FIELD_UNKNOWN', { field, known: known.join(', ') });
  }
  return selected;
}

/** Keeps only the named fields of an item. */
export function pickFields<T extends object>(item: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return item;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (f in item) out[f] = (item as Record<string, unknown>)[f];
  return out as Partial<T>;
}

/** Whether an item has every filtered field at the required value. */
export function matchesFilters(item: object, filters: Record<string, string>): boolean {
  for (const name in filters) {
    const value = (item as Record<string, unknown>)[name];
    if (scalarText(value) !== filters[name]) return false;
  }
  return true;
}

/**
 * Filters, pages and trims `items` as the query says; sets the `Link: rel="next"`
 * header when there are more. `next` is an absolute URL under the mount prefix.
 */
export function pageOf<T extends object>(ctx: Context, items: readonly T[], query: ListQuery): Page<Partial<T>> {
  const matching = items.filter((item) => matchesFilters(item, query.filters));
  const slice = matching.slice(query.offset, query.offset + query.limit);
  const page: Page<Partial<T>> = {
    items: slice.map((item) => pickFields(item, query.fields)),
    offset: query.offset,
    limit: query.limit,
    total: matching.length,
  };
  if (query.offset + query.limit < matching.length) {
    const params = new URLSearchParams(ctx.querystring);
    params.set('offset', String(query.offset + query.limit));
    params.set('limit', String(query.limit));
    page.next = absoluteUrl(ctx, `${ctx.path}?${params.toString()}`);
    ctx.append('Link', `<${page.next}>; rel="next"`);
  }
  return page;
}
