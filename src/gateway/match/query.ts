/**
 * @module gateway/match/query
 * `query_parameters` and `regex_query_parameters`: which query arguments a
 * request must carry, read as its backend reads them.
 *
 * Names and values are compared decoded (`%XX`, and `+` as a space, as
 * WHATWG URLs, Express, Spring and PHP decode them): a Mapping for
 * `mode=admin` takes `mo%64e=admin+` too, which every backend reads as
 * `mode=admin `, so that no spelling of an argument reaches a Mapping its
 * backend would not have chosen. A malformed escape is kept as written, as
 * those backends keep it. An argument given twice is read by its first
 * value, as Envoy reads it. Backends read a query otherwise too: PHP by the
 * last value, and a name cut at a NUL or a `[` (`mode%00x`, `mode[]`),
 * without leading spaces, `.` as `_`; ASP.NET in any case; Perl's CGI and
 * Plack with `;` as a separator;
 * some decode twice. A request that one of those readings would route
 * apart from Envoy's is refused (see the route table).
 */
import { lenientReadings } from '../request/method-override';
import type { RE2JS } from './regex';

/** What one argument must be: there at all, this exact value, or a value the pattern matches whole. */
export type QueryCondition =
  | { readonly name: string; readonly present: true }
  | { readonly name: string; readonly exact: string }
  | { readonly name: string; readonly pattern: RE2JS };

/**
 * How a query is read: Envoy's (the first value of the name as decoded),
 * the last value of that name, or by the lenient name (see {@link
 * lenientName}): its first value or its last.
 */
export const QueryReading = { first: 0, last: 1, lenientFirst: 2, lenientLast: 3 } as const;
export type QueryReading = (typeof QueryReading)[keyof typeof QueryReading];

/** The readings other than Envoy's that a backend may make of a query. */
export const OTHER_READINGS: readonly QueryReading[] = [QueryReading.last, QueryReading.lenientFirst, QueryReading.lenientLast];

/** Decodes a query name or value as backends do: `+` is a space, then `%XX`; kept as written when malformed. */
function decodeComponent(text: string): string {
  const spaced = text.indexOf('+') === -1 ? text : text.replace(/\+/g, ' ');
  if (spaced.indexOf('%') === -1) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * The name any lenient backend may read a decoded name as: spaces around it
 * dropped, qs's `[mode]` read as `mode`, cut at a NUL or a `[` (PHP reads
 * `mode%00x` and `mode[]` as `mode`), `.` and spaces as `_` (PHP), upper
 * case (ASP.NET compares names in any case).
 */
export function lenientName(name: string): string {
  let start = 0;
  let end = name.length;
  while (start < end && isSpace(name.charCodeAt(start))) start++;
  const bracketed = name.charCodeAt(start) === 91;
  if (bracketed) start++;
  for (let i = start; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c === 0 || c === 91 || (bracketed && c === 93)) {
      end = i;
      break;
    }
  }
  while (end > start && isSpace(name.charCodeAt(end - 1))) end--;
  return name.slice(start, end).replace(/[. ]/g, '_').toUpperCase();
}

/** A request's query, decoded: each argument's values in order, by its name and (built when asked) by its lenient name. */
export class ParsedQuery {
  private readonly values = new Map<string, string[]>();
  private lenient: Map<string, string[]> | null = null;

  constructor(private readonly raw: string) {
    if (raw === '') return;
    for (const pair of raw.split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
      const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1));
      const list = this.values.get(name);
      if (list === undefined) this.values.set(name, [value]);
      else list.push(value);
    }
  }

  /**
   * The values by lenient name: `;` separates arguments as `&` does, and an
   * argument counts under each name it reads as, decoded once and again
   * while escapes remain (each escape alone, as PHP decodes them), with
   * each of its values read so.
   */
  private lenientValues(): Map<string, string[]> {
    if (this.lenient !== null) return this.lenient;
    const lenient = new Map<string, string[]>();
    for (const pair of this.raw.split(/[&;]/)) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const values = eq === -1 ? [''] : lenientReadings(pair.slice(eq + 1));
      const names = new Set(lenientReadings(eq === -1 ? pair : pair.slice(0, eq)).map(lenientName));
      for (const name of names) {
        const list = lenient.get(name);
        if (list === undefined) lenient.set(name, [...values]);
        else list.push(...values);
      }
    }
    return (this.lenient = lenient);
  }

  /** The value of `name` by one reading; undefined when that reading finds no such argument. */
  value(name: string, reading: QueryReading): string | undefined {
    if (reading === QueryReading.first || reading === QueryReading.last) {
      const list = this.values.get(name);
      return list === undefined ? undefined : list[reading === QueryReading.first ? 0 : list.length - 1];
    }
    const list = this.lenientValues().get(lenientName(name));
    if (list === undefined) return undefined;
    return list[reading === QueryReading.lenientFirst ? 0 : list.length - 1];
  }

  /**
   * Whether some backend may read `name` otherwise than Envoy does: given
   * more than once with values that differ, or given in a spelling only a
   * lenient backend reads as `name`. `present`: only whether it is there
   * at all matters.
   */
  ambiguous(name: string, present: boolean): boolean {
    const exact = this.values.get(name);
    const lenient = this.lenientValues().get(lenientName(name));
    if (lenient === undefined) return false;
    if (exact === undefined) return true;
    if (present) return false;
    const first = exact[0];
    for (let i = 0; i < lenient.length; i++) if (lenient[i] !== first) return true;
    return false;
  }
}

/** Whether a parsed query meets every condition, its arguments read by `reading`. */
export function queryMatches(conditions: readonly QueryCondition[], query: ParsedQuery, reading: QueryReading): boolean {
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i];
    const value = query.value(condition.name, reading);
    if (value === undefined) return false;
    if ('exact' in condition ? value !== condition.exact : 'pattern' in condition && !condition.pattern.testExact(value)) return false;
  }
  return true;
}

/** Whether the readings of the query could meet `conditions` differently from Envoy's. */
export function readingsDiffer(conditions: readonly QueryCondition[], query: ParsedQuery): boolean {
  for (const condition of conditions) if (query.ambiguous(condition.name, 'present' in condition)) return true;
  return false;
}
