/**
 * @module gateway/request/override/query-reading
 * A query's names and values as the most lenient backends read them, so
 * that the gateway, which reads them as Envoy does, can tell when some
 * backend would read them otherwise: `_method` overrides (./method-override)
 * and `query_parameters` (match/query) both ask. Values and names are
 * decoded once, and again while escapes remain (for a backend that decodes
 * twice), with overlong UTF-8 read as the character it spells; names are
 * read as PHP, qs, Rack and ASP.NET read them.
 */
import { hexValue } from '../path';

/** How many times a name or value is decoded at most: once, then again for backends that decode twice, or three times. */
const MAX_DECODES = 3;
const PERCENT = 37;
const PLUS = 43;
const ESCAPE = /%[0-9A-Fa-f]{2}/;

/** Whether `c` is a space or a control character a backend trims as one (tab, line feed...). */
export function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13);
}

/**
 * UTF-8 as the most lenient decoder reads it: an overlong form (`C0 AE`,
 * `E0 80 AE`, and the five- and six-byte forms of RFC 2279) as the
 * character it spells, as decoders without the shortest-form check do; any
 * other byte that is not UTF-8 as U+FFFD, as strict ones do.
 */
function readLeniently(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i];
    const length =
      lead < 0x80
        ? 1
        : lead < 0xc0
          ? 0
          : lead < 0xe0
            ? 2
            : lead < 0xf0
              ? 3
              : lead < 0xf8
                ? 4
                : lead < 0xfc
                  ? 5
                  : lead < 0xfe
                    ? 6
                    : 0;
    let point = length === 1 ? lead : lead & (0x7f >> length);
    let k = 1;
    for (; k < length && i + k < bytes.length && (bytes[i + k] & 0xc0) === 0x80; k++)
      point = point * 64 + (bytes[i + k] & 0x3f);
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

/** The name's spelling that PHP gives `.` and spaces (`_`), in upper case, as ASP.NET compares names; empty stays empty. */
function normalName(name: string): string {
  return (name.indexOf('.') === -1 && name.indexOf(' ') === -1 ? name : name.replace(/[. ]/g, '_')).toUpperCase();
}

/** What Rack reads a name as: the brackets at its start dropped, up to the next bracket (qs reads `[mode]` so too). */
const RACK_NAME = /^[[\]]*([^[\]]*)/;

/**
 * The names lenient backends may read a decoded query name as, in upper
 * case (ASP.NET compares names in any case), the first being the most
 * common reading: spaces around it dropped, and cut at a NUL (PHP reads a
 * C string); up to a `[` (PHP's and qs's `mode[]`), or that `[` read as `_`
 * when no `]` closes it (PHP's `user[role` is `user_role`); the brackets
 * at its start dropped and up to the next one (Rack's `[mode`, `]mode`,
 * `mode]`, and qs's `[mode]`); `.` and spaces as `_` (PHP) in each.
 */
export function nameReadings(name: string): string[] {
  let start = 0;
  let end = name.length;
  while (start < end && isSpace(name.charCodeAt(start))) start++;
  const nul = name.indexOf('\0', start);
  if (nul !== -1) end = nul;
  while (end > start && isSpace(name.charCodeAt(end - 1))) end--;
  const text = name.slice(start, end);
  const bracket = text.indexOf('[');
  const head = normalName(bracket === -1 ? text : text.slice(0, bracket));
  const names = [head];
  if (bracket !== -1 && text.indexOf(']', bracket) === -1) names.push(`${head}_${normalName(text.slice(bracket + 1))}`);
  const rack = normalName((RACK_NAME.exec(text) as RegExpExecArray)[1]);
  if (rack !== '' && rack !== head) names.push(rack);
  return names;
}
