/**
 * @module gateway/request/override/method-override
 * The methods a backend may take a request for besides the one of its
 * request line. Express's method-override (`X-HTTP-Method-Override`, or the
 * `_method` query argument), Symfony and Laravel (the header, `_method`),
 * Spring's HiddenHttpMethodFilter and Jersey (`_method`), OData and ASP.NET
 * (`X-HTTP-Method`), Plack (`x-tunneled-method`) and ServiceStack (the
 * header's name as a query argument) act on a POST as the method it names:
 * routed by POST alone, `POST /items/1` with `X-HTTP-Method-Override: DELETE`
 * would reach a Mapping that bypasses auth for POST, and be a DELETE there.
 * The route table holds a request to every method it may be read as
 * (`RouteTable.matchAlike`). A `_method` in the body of a POST is read by
 * ./body-override.
 *
 * The query is read as the most lenient of those backends read it, so that
 * no spelling of the argument escapes the gateway (./query-reading): its
 * names decoded (`%5fmethod`, `+` as a space) and compared in any case
 * (ASP.NET), PHP's mangling (`.method`, ` _method`, `_method[]` and
 * `_method%00x` are `$_GET['_method']`), Rack's (`[_method`, `_method]`),
 * `;` as a separator (PHP's `arg_separator.input`, Perl's CGI and Plack,
 * older Python and Go), names and values decoded once more (for a backend
 * that decodes twice), and overlong UTF-8 read as the character it spells.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { lenientReadings, nameReadings } from './query-reading';

/** The override headers, as Node names them; no lookalike spelling of them reaches a backend (gateway/runtime). */
export const OVERRIDE_HEADERS: readonly string[] = ['x-http-method-override', 'x-http-method', 'x-method-override'];
/** The query arguments that name an override, in upper case: `_method` and the header names some frameworks read in the query. */
const QUERY_KEYS: readonly string[] = [
  '_METHOD',
  'X-HTTP-METHOD-OVERRIDE',
  'X-HTTP-METHOD',
  'X-METHOD-OVERRIDE',
  'X-TUNNELED-METHOD',
];

const PERCENT = 37;
const PLUS = 43;
const AMPERSAND = 38;
const SEMICOLON = 59;
const EQUALS = 61;
/**
 * A name that may be an override: every one of {@link QUERY_KEYS} ends in
 * `method`, which no backend's reading of a name splits, so a name holds
 * it as written, in some case, or holds an escape or a `+`, which may hide
 * any character. A query without one (the usual query) is ruled out by
 * this test alone.
 */
const MAY_NAME_OVERRIDE = /(?:^|[&;])[^=&;]*(?:[%+]|method)/i;
const METHOD = 'method';

/** Adds the methods a value names (a list, when it came twice), upper case. */
function addMethods(into: string[], value: string | readonly string[]): void {
  for (const item of typeof value === 'string' ? [value] : value) {
    for (const token of item.split(',')) {
      const method = token.trim().toUpperCase();
      if (method !== '') into.push(method);
    }
  }
}

/** Whether a name of the query may be an override once decoded: it holds an escape or a `+`, or `method` in some case. */
function mayNameOverride(query: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = query.charCodeAt(i);
    if (c === PERCENT || c === PLUS) return true;
    if ((c | 0x20) === METHOD.charCodeAt(0) && i + METHOD.length <= end && spellsMethodAt(query, i)) return true;
  }
  return false;
}

/** Whether `method`, in any case, is written at `at`. */
function spellsMethodAt(query: string, at: number): boolean {
  for (let k = 1; k < METHOD.length; k++) if ((query.charCodeAt(at + k) | 0x20) !== METHOD.charCodeAt(k)) return false;
  return true;
}

/**
 * Adds the methods the override arguments of a query name to `methods`, and
 * returns it (a new list when it was undefined). The usual query, which has
 * none, allocates nothing.
 */
function addQueryMethods(methods: string[] | undefined, query: string): string[] | undefined {
  let start = 0;
  let equals = -1;
  for (let i = 0; i <= query.length; i++) {
    const c = i === query.length ? AMPERSAND : query.charCodeAt(i);
    if (c === EQUALS) {
      if (equals === -1) equals = i;
      continue;
    }
    if (c !== AMPERSAND && c !== SEMICOLON) continue;
    const nameEnd = equals === -1 ? i : equals;
    if (nameEnd > start && mayNameOverride(query, start, nameEnd)) {
      const names = lenientReadings(query.slice(start, nameEnd)).flatMap(nameReadings);
      if (names.some((name) => QUERY_KEYS.includes(name))) {
        addMethods((methods ??= []), lenientReadings(equals === -1 ? '' : query.slice(equals + 1, i)));
      }
    }
    start = i + 1;
    equals = -1;
  }
  return methods;
}

/**
 * The methods a request may be overridden to by its headers or its query
 * (the query string as forwarded: without `?` and fragment), upper case;
 * undefined when it names none (the usual case, which allocates nothing).
 */
export function overriddenMethods(headers: IncomingHttpHeaders, query: string): string[] | undefined {
  let methods: string[] | undefined;
  for (let i = 0; i < OVERRIDE_HEADERS.length; i++) {
    const value = headers[OVERRIDE_HEADERS[i]];
    if (value !== undefined) addMethods((methods ??= []), value);
  }
  if (query !== '' && MAY_NAME_OVERRIDE.test(query)) methods = addQueryMethods(methods, query);
  return methods?.length ? methods : undefined;
}
