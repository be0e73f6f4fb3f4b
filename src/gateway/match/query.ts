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
 * last value, split at `&` alone, decoded once, a name cut at a NUL or a
 * closed `[` (`mode%00x`, `mode[]`) and an unclosed `[` read as `_`;
 * Rack without the brackets around a name (`[mode`, `mode]`); ASP.NET in
 * any case; Perl's CGI and Plack with `;` as a separator; some
 * decode twice. A request that one of those readings would route apart
 * from Envoy's is refused (see the route table).
 */
import { lenientReadings, nameReadings } from '../request/override/query-reading';
import type { MatchMeter, Pattern } from './regex';

/** What one argument must be: there at all, this exact value, or a value the pattern matches whole. */
export type QueryCondition =
  | { readonly name: string; readonly present: true }
  | { readonly name: string; readonly exact: string }
  | { readonly name: string; readonly pattern: Pattern };

/**
 * How a query is read: Envoy's (`first`: the first value of a name as
 * decoded), by the last value (`last`, PHP's and Rack's), or Envoy's but
 * for one name read as one value a lenient backend may give it.
 */
export type QueryReading = 'first' | 'last' | { readonly name: string; readonly value: string };

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
   * The values by lenient name (see {@link nameReadings}), in order: the
   * query split at `&` alone (PHP, ASP.NET) and at `;` too (Perl's CGI,
   * Plack), each name and value decoded once (each escape alone, as PHP
   * decodes them) and again while escapes remain.
   */
  private lenientValues(): Map<string, string[]> {
    if (this.lenient !== null) return this.lenient;
    const lenient = new Map<string, string[]>();
    const pairs = new Set([...this.raw.split('&'), ...this.raw.split(/[&;]/)]);
    for (const pair of pairs) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const values = eq === -1 ? [''] : lenientReadings(pair.slice(eq + 1));
      const names = new Set(lenientReadings(eq === -1 ? pair : pair.slice(0, eq)).flatMap(nameReadings));
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
    if (typeof reading === 'object' && reading.name === name) return reading.value;
    const list = this.values.get(name);
    return list === undefined ? undefined : list[reading === 'last' ? list.length - 1 : 0];
  }

  /**
   * The readings other than Envoy's that some backend may make of `name`:
   * its last value, when it is given twice and that differs from the
   * first; each value a lenient backend may read it as, when that differs
   * from Envoy's (or Envoy's reading has none). `present`: only whether it
   * is there at all matters.
   */
  otherReadings(name: string, present: boolean, into: QueryReading[]): void {
    const exact = this.values.get(name);
    if (!present && exact !== undefined && exact.length > 1 && exact[exact.length - 1] !== exact[0]) into.push('last');
    const lenient = this.lenientValues().get(nameReadings(name)[0]);
    if (lenient === undefined || (present && exact !== undefined)) return;
    const seen = new Set<string>();
    for (const value of lenient) {
      if (seen.has(value) || (exact !== undefined && value === exact[0])) continue;
      seen.add(value);
      into.push({ name, value });
    }
  }
}

/**
 * Whether `value` meets `condition` (there at all, this exact value, a
 * value the pattern matches whole), what a pattern reads charged to `meter`.
 */
export function valueMeets(condition: QueryCondition, value: string, meter: MatchMeter): boolean {
  return 'exact' in condition
    ? value === condition.exact
    : 'pattern' in condition
      ? condition.pattern.testExact(value, meter, 'url')
      : true;
}

/** Whether a parsed query meets every condition, its arguments read by `reading`. */
export function queryMatches(
  conditions: readonly QueryCondition[],
  query: ParsedQuery,
  reading: QueryReading,
  meter: MatchMeter,
): boolean {
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i];
    const value = query.value(condition.name, reading);
    if (value === undefined || !valueMeets(condition, value, meter)) return false;
  }
  return true;
}

/**
 * The readings of the query other than Envoy's that some backend may make
 * of the arguments `conditions` (every route's) read: of the values a name
 * may be read as, one for each way they meet the conditions on that name,
 * so that a query of a thousand spellings of an argument costs the routes
 * a few more matches, not a thousand.
 */
export function otherReadings(
  conditions: readonly QueryCondition[],
  query: ParsedQuery,
  meter: MatchMeter,
): QueryReading[] {
  const byName = new Map<string, QueryCondition[]>();
  for (const condition of conditions) {
    const list = byName.get(condition.name);
    if (list === undefined) byName.set(condition.name, [condition]);
    else list.push(condition);
  }
  const readings: QueryReading[] = [];
  const outcomes = new Set<string>();
  for (const [name, onName] of byName) {
    const found: QueryReading[] = [];
    query.otherReadings(
      name,
      onName.every((c) => 'present' in c),
      found,
    );
    for (const reading of found) {
      if (typeof reading !== 'object') {
        if (!readings.includes(reading)) readings.push(reading);
        continue;
      }
      const outcome = `${name}\0${onName.map((c) => (valueMeets(c, reading.value, meter) ? 1 : 0)).join('')}`;
      if (outcomes.has(outcome)) continue;
      outcomes.add(outcome);
      readings.push(reading);
    }
  }
  return readings;
}
