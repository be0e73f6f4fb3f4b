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
 * value, as Envoy reads it; since PHP and others read the last one, a
 * request whose first and last values of an argument would route apart is
 * refused (see the route table).
 */
import type { RE2JS } from './regex';

/** What one argument must be: there at all, this exact value, or a value the pattern matches whole. */
export type QueryCondition =
  | { readonly name: string; readonly present: true }
  | { readonly name: string; readonly exact: string }
  | { readonly name: string; readonly pattern: RE2JS };

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

/** A request's query, decoded: each argument's values in order. */
export class ParsedQuery {
  private readonly values = new Map<string, string[]>();

  constructor(raw: string) {
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

  /** The value of `name` by one reading: its first (`last` false), as Envoy reads it, or its last. */
  value(name: string, last: boolean): string | undefined {
    const list = this.values.get(name);
    return list === undefined ? undefined : list[last ? list.length - 1 : 0];
  }

  /** Whether `name` is given more than once with values that differ in its first and last. */
  differs(name: string): boolean {
    const list = this.values.get(name);
    return list !== undefined && list.length > 1 && list[0] !== list[list.length - 1];
  }
}

/** Whether a parsed query meets every condition, its arguments read by their first value or (`last`) their last. */
export function queryMatches(conditions: readonly QueryCondition[], query: ParsedQuery, last: boolean): boolean {
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i];
    const value = query.value(condition.name, last);
    if (value === undefined) return false;
    if ('exact' in condition ? value !== condition.exact : 'pattern' in condition && !condition.pattern.testExact(value)) return false;
  }
  return true;
}

/** Whether two readings of the query (first and last values) could meet `conditions` differently. */
export function readingsDiffer(conditions: readonly QueryCondition[], query: ParsedQuery): boolean {
  for (const condition of conditions) if (!('present' in condition) && query.differs(condition.name)) return true;
  return false;
}
