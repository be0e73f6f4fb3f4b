/**
 * @module gateway/request/method-override
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
 * no spelling of the argument escapes the gateway: its names decoded
 * (`%5fmethod`, `+` as a space) and compared in any case (ASP.NET), PHP's
 * mangling (`.method`, ` _method`, `_method[]` and `_method%00x` are `$_GET['_method']`),
 * `;` as a separator (PHP's `arg_separator.input`, Perl's CGI and Plack,
 * older Python and Go), names and values decoded once more (for a backend
 * that decodes twice), and overlong UTF-8 read as the character it spells.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { hexValue } from './path';

/** The override headers, as Node names them; no lookalike spelling of them reaches a backend (gateway/runtime). */
export const OVERRIDE_HEADERS: readonly string[] = ['x-http-method-override', 'x-http-method', 'x-method-override'];
/** The query arguments that name an override, in upper case: `_method` and the header names some frameworks read in the query. */
const QUERY_KEYS: readonly string[] = ['_METHOD', 'X-HTTP-METHOD-OVERRIDE', 'X-HTTP-METHOD', 'X-METHOD-OVERRIDE', 'X-TUNNELED-METHOD'];
/** How many times a name or value is decoded at most: once, then again for backends that decode twice, or three times. */
const MAX_DECODES = 3;

const NUL = 0;
const PERCENT = 37;
const PLUS = 43;
const AMPERSAND = 38;
const SEMICOLON = 59;
const EQUALS = 61;
const BRACKET = 91;
const CLOSING_BRACKET = 93;
const ESCAPE = /%[0-9A-Fa-f]{2}/;
/**
 * A name that may be an override: one that starts as one does (`_`, `.`,
 * `x`, `[`), or that holds an escape or a `+`, which may hide any
 * character. A query without one (the usual query) is ruled out by this
 * test alone.
 */
const MAY_NAME_OVERRIDE = /(?:^|[&;])(?:[_.xX[]|[^=&;]*[%+])/;

/** Adds the methods a value names (a list, when it came twice), upper case. */
function addMethods(into: string[], value: string | readonly string[]): void {
  for (const item of typeof value === 'string' ? [value] : value) {
    for (const token of item.split(',')) {
      const method = token.trim().toUpperCase();
      if (method !== '') into.push(method);
    }
  }
}

/** Whether `c` is a space or a control character a backend trims as one (tab, line feed...). */
export function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * Whether `text` from `start` to `end` is one of {@link QUERY_KEYS} as the
 * backends read a name: in any case; spaces around it dropped and `.` or a
 * space read as `_` (PHP); up to a NUL (PHP reads a name as a C string, so
 * `_method%00x` is its `_method`) or a `[` (PHP and qs read `_method[]` as
 * `_method`), or within the brackets it starts with (qs reads `[_method]`
 * as `_method`). Allocates nothing.
 */
function namesOverride(text: string, start: number, end: number): boolean {
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  const bracketed = text.charCodeAt(start) === BRACKET;
  if (bracketed) start++;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === NUL || c === BRACKET || (bracketed && c === CLOSING_BRACKET)) {
      end = i;
      break;
    }
  }
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  next: for (let n = 0; n < QUERY_KEYS.length; n++) {
    const name = QUERY_KEYS[n];
    if (name.length !== end - start) continue;
    for (let k = 0; k < name.length; k++) {
      let c = text.charCodeAt(start + k);
      if (c >= 97 && c <= 122) c -= 32;
      else if (c === 46 || c === 32) c = 95;
      if (c !== name.charCodeAt(k)) continue next;
    }
    return true;
  }
  return false;
}

/** Whether a name of the query may be an override once decoded: it holds an escape or a `+`, or it is one as it stands. */
function mayNameOverride(query: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = query.charCodeAt(i);
    if (c === PERCENT || c === PLUS) return true;
  }
  return namesOverride(query, start, end);
}

/**
 * UTF-8 as the most lenient decoder reads it: an overlong form (`C0 AE`,
 * `E0 80 AE`, and the five- and six-byte forms of RFC 2279) as the
 * character it spells, as decoders without the shortest-form check do; any
 * other byte that is not UTF-8 as U+FFFD, as strict ones do.
 */
function readLeniently(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i];
    const length = lead < 0x80 ? 1 : lead < 0xc0 ? 0 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : lead < 0xf8 ? 4 : lead < 0xfc ? 5 : lead < 0xfe ? 6 : 0;
    let point = length === 1 ? lead : lead & (0x7f >> length);
    let k = 1;
    for (; k < length && i + k < bytes.length && (bytes[i + k] & 0xc0) === 0x80; k++) point = point * 64 + (bytes[i + k] & 0x3f);
    if (length === 0 || k < length || point > 0x10ffff || (point >= 0xd800 && point <= 0xdfff)) {
      text += '\uFFFD';
      i += k;
    } else {
      text += String.fromCodePoint(point);
      i += length;
    }
  }
  return text;
}

/** A name or value of the query decoded once: `+` as a space, escapes as bytes (a malformed one kept as it is), read leniently. */
function decodeOnce(text: string): string {
  const raw = Buffer.from(text, 'utf8');
  const bytes = new Uint8Array(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const hi = raw[i] === PERCENT ? hexValue(raw[i + 1]) : -1;
    const lo = hi < 0 ? -1 : hexValue(raw[i + 2]);
    if (lo >= 0) {
      bytes[n++] = hi * 16 + lo;
      i += 2;
    } else {
      bytes[n++] = raw[i] === PLUS ? 32 : raw[i];
    }
  }
  return readLeniently(bytes.subarray(0, n));
}

/** What backends may read a name or value of the query as: decoded once, and again while escapes remain. */
export function lenientReadings(text: string): string[] {
  const read: string[] = [];
  let current = text;
  for (let i = 0; i < MAX_DECODES; i++) {
    current = decodeOnce(current);
    read.push(current);
    if (!ESCAPE.test(current) && !current.includes('+')) break;
  }
  return read;
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
      // toUpperCase reads ı as I, as .NET compares names in any case.
      const names = lenientReadings(query.slice(start, nameEnd)).map((name) => name.toUpperCase());
      if (names.some((name) => namesOverride(name, 0, name.length))) {
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
