/**
 * @module gateway/request/path
 * The one spelling of a request path that routing, auth and the backends see.
 *
 * Decisions, so that no spelling of a path can reach a different Mapping (and
 * so skip the auth its normal form needs):
 * - Percent-escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) are
 *   decoded (`%63` → `c`, `%2e`/`%2E` → `.`); every other escape is kept with
 *   its hex in upper case (`%3a` → `%3A`), so mixed-case escapes compare equal.
 * - An encoded slash or backslash (`%2F`, `%2f`, `%5C`, `%5c`) is a 400: kept
 *   opaque it would be one segment to the gateway and two to many backends.
 * - A raw backslash is a slash, as browsers and Envoy read it.
 * - Characters that may not appear raw in a path (`"`, `<`, `>`, `[`, `]`, `^`,
 *   `` ` ``, `{`, `|`, `}`, non-ASCII) are percent-encoded (UTF-8).
 * - A malformed escape (`%`, `%2`, `%zz`) is a 400.
 * - An encoded NUL (`%00`) is a 400, as Envoy's path normalisation has it: a
 *   backend in C, or one that hands the path to the file system, stops at it,
 *   so `/admin%00x`, routed as a name below `/`, would be `/admin` there.
 * - `.` and `..` segments are resolved after decoding, so `%2e%2e` counts;
 *   duplicate slashes are merged; a trailing slash is kept.
 * - A path that climbs above the root (`/..`, `/v1/../../x`) is a 400.
 * - A dot segment with parameters (`..;x`, `.;`, `%2e%2e;`, `..%3B`) is a
 *   400: the gateway would route it as a name, and Tomcat, Jetty and Spring
 *   resolve it as `..`, which would reach a path of another Mapping without
 *   its auth. Some backends decode `%3B` before they drop parameters.
 *
 * Other parameters (`/a;x/b`) stay, since a backend may read them; those
 * backends drop them from the path they route by, so the gateway matches the
 * form without them too ({@link withoutParameters}) and refuses a path that
 * the two forms would route apart.
 *
 * Escapes that a backend may read otherwise than the gateway does are kept in
 * the normal form and named by {@link unsafeEscape}, which the gateway refuses
 * unless the Mapping allows them: bytes that are not UTF-8, and escapes
 * encoded twice.
 */
import { isUtf8 } from 'node:buffer';
import { ERRORS, HttpError, type ErrorCode } from '../../http';

const SLASH = 47;
const BACKSLASH = 92;
const PERCENT = 37;
const DOT = 46;
const SEMICOLON = 59;
/** `;` as the normal form escapes it (upper-case hex). */
const ENCODED_SEMICOLON = '%3B';
/** The `;parameters` of a segment, up to the next slash. */
const PARAMETERS = /(?:;|%3B)[^/]*/g;

/** Unreserved characters (RFC 3986 §2.3): decoded when escaped. */
const UNRESERVED = new Uint8Array(128);
/** Characters that stand raw in a normal path: unreserved, sub-delims, `:`, `@` and `/`. */
const RAW = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') {
  UNRESERVED[c.charCodeAt(0)] = 1;
  RAW[c.charCodeAt(0)] = 1;
}
for (const c of "!$&'()*+,;=:@/") RAW[c.charCodeAt(0)] = 1;

const HEX = '0123456789ABCDEF';

/** The value of a hex digit (a character code), or -1. */
export function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/**
 * Whether `path` is already normal: it starts with `/` and has no `%`, no
 * backslash, no `//`, no segment starting with `.` and no character that must
 * be encoded. One pass, no allocation.
 */
export function isNormalPath(path: string): boolean {
  if (path.charCodeAt(0) !== SLASH) return false;
  let afterSlash = true;
  for (let i = 1; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c >= 128 || RAW[c] === 0) return false;
    if (c === SLASH) {
      if (afterSlash) return false;
      afterSlash = true;
    } else {
      if (c === DOT && afterSlash) return false;
      afterSlash = false;
    }
  }
  return true;
}

/**
 * The normal form of a request path (the part before `?`). Returns `path`
 * itself when it is already normal. Throws a 400 {@link HttpError} for an
 * encoded slash or backslash, a malformed escape, a path that does not start
 * with `/`, or one that climbs above the root.
 */
export function normalisePath(path: string): string {
  return isNormalPath(path) ? path : rebuild(path);
}

/** Whether a (decoded) segment is `.` or `..` followed by `;parameters`, the `;` raw or encoded. */
function isDotWithParams(segment: string): boolean {
  if (segment.charCodeAt(0) !== DOT) return false;
  const at = segment.charCodeAt(1) === DOT ? 2 : 1;
  return segment.charCodeAt(at) === SEMICOLON || segment.startsWith(ENCODED_SEMICOLON, at);
}

/**
 * A normal path without the `;parameters` of its segments (`/a;x/b` is
 * `/a/b`), as Tomcat, Jetty, Spring and JAX-RS read it before routing, `%3B`
 * counted as `;` since some of them decode first; `path` itself when it has
 * none. Dot segments with parameters are refused by {@link normalisePath},
 * so none appears here.
 */
export function withoutParameters(path: string): string {
  if (!path.includes(';') && !path.includes(ENCODED_SEMICOLON)) return path;
  return normalisePath(path.replace(PARAMETERS, ''));
}

function rebuild(path: string): string {
  const first = path.charCodeAt(0);
  if (first !== SLASH && first !== BACKSLASH) throw HttpError.of('PATH_NOT_ABSOLUTE');
  const segments: string[] = [];
  let segment = '';
  // Whether the path ends as a directory: in a slash, `.` or `..`.
  let trailing = true;

  for (let i = 1; i <= path.length; i++) {
    const c = i === path.length ? SLASH : path.charCodeAt(i);
    if (c === SLASH || c === BACKSLASH) {
      if (isDotWithParams(segment)) throw HttpError.of('PATH_DOT_PARAMETERS');
      if (segment === '..') {
        if (segments.length === 0) throw HttpError.of('PATH_ABOVE_ROOT');
        segments.pop();
        trailing = true;
      } else if (segment === '.') {
        trailing = true;
      } else if (segment !== '') {
        segments.push(segment);
        trailing = i !== path.length;
      } else if (i !== path.length) {
        trailing = true;
      }
      segment = '';
    } else if (c === PERCENT) {
      const hi = hexValue(path.charCodeAt(i + 1));
      const lo = hexValue(path.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) throw HttpError.of('PATH_ESCAPE_MALFORMED');
      const byte = hi * 16 + lo;
      if (byte === SLASH || byte === BACKSLASH) throw HttpError.of('PATH_ENCODED_SLASH');
      if (byte === 0) throw HttpError.of('PATH_ENCODED_NUL');
      segment += byte < 128 && UNRESERVED[byte] === 1 ? String.fromCharCode(byte) : `%${HEX[hi]}${HEX[lo]}`;
      i += 2;
    } else if (c < 128 && RAW[c] === 1) {
      segment += path[i];
    } else if (c < 128) {
      segment += `%${HEX[c >> 4]}${HEX[c & 15]}`;
    } else {
      // Never from the wire (Node refuses non-ASCII targets); from config: UTF-8.
      const char = String.fromCodePoint(path.codePointAt(i)!);
      segment += encodeURIComponent(char);
      i += char.length - 1;
    }
  }
  if (segments.length === 0) return '/';
  const joined = `/${segments.join('/')}`;
  return trailing ? `${joined}/` : joined;
}

/** Why {@link unsafeEscapeError} refuses a path, as the error of the 400. */
const UNSAFE_ESCAPE_ERRORS = {
  notUtf8: 'PATH_ESCAPE_NOT_UTF8',
  decodedAgain: 'PATH_ESCAPE_DECODED_AGAIN',
  notUtf8Again: 'PATH_ESCAPE_NOT_UTF8_AGAIN',
  foldsToSeparator: 'PATH_ESCAPE_FOLDS_TO_SEPARATOR',
} as const satisfies Record<string, ErrorCode>;

type UnsafeEscapeError = (typeof UNSAFE_ESCAPE_ERRORS)[keyof typeof UNSAFE_ESCAPE_ERRORS];

/** Why {@link unsafeEscape} refuses a path, as the detail of the 400. */
export const UNSAFE_ESCAPES = {
  notUtf8: ERRORS.PATH_ESCAPE_NOT_UTF8.detail,
  decodedAgain: ERRORS.PATH_ESCAPE_DECODED_AGAIN.detail,
  notUtf8Again: ERRORS.PATH_ESCAPE_NOT_UTF8_AGAIN.detail,
  foldsToSeparator: ERRORS.PATH_ESCAPE_FOLDS_TO_SEPARATOR.detail,
} as const;

/**
 * Characters that Unicode's compatibility normalisation (NFKC, as Python
 * and some frameworks apply to paths) or Windows' best-fit mapping (IIS,
 * and any backend that converts a path to an ANSI code page) read as a dot,
 * a slash or a backslash: `/%EF%BC%8E%EF%BC%8E/` is `/../` there.
 */
const FOLDED_SEPARATORS = new Set([
  0x2024, 0x2025, 0xfe52, 0xff0e, 0x2044, 0x2215, 0x29f8, 0xff0f, 0x2216, 0x29f9, 0xfe68, 0xff3c,
]);

/** What {@link endOfUtf8Run} returns for bytes that are not UTF-8, and for a character of {@link FOLDED_SEPARATORS}. */
const NOT_UTF8 = -1;
const FOLDS = -2;

/** The byte of two hex digits at `at`, or -1. */
function hexPair(path: string, at: number): number {
  const hi = hexValue(path.charCodeAt(at));
  const lo = hexValue(path.charCodeAt(at + 1));
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/**
 * The byte the escape at `at` spells once decoded `depth + 1` times, or -1:
 * `%XY` at depth 0; `%25`, `depth - 1` times `25`, then `XY` at depth 1 and
 * more (`%252e` is a dot at depth 1, `%25252e` at depth 2).
 */
function byteAt(path: string, at: number, depth: number): number {
  if (path.charCodeAt(at) !== PERCENT) return -1;
  if (depth === 0) return hexPair(path, at + 1);
  if (hexPair(path, at + 1) !== PERCENT) return -1;
  let i = at + 3;
  for (let d = 1; d < depth; d++, i += 2) if (hexPair(path, i) !== PERCENT) return -1;
  return hexPair(path, i);
}

/**
 * Where the run of escapes from `at` that spell bytes of 0x80 or more at
 * `depth` ends; {@link NOT_UTF8} when those bytes are not UTF-8 (an overlong
 * form, a lone or missing continuation byte, a surrogate, past U+10FFFF),
 * {@link FOLDS} when they hold a character backends read as a separator.
 */
function endOfUtf8Run(path: string, at: number, depth: number): number {
  const bytes: number[] = [];
  const step = depth === 0 ? 3 : 2 * depth + 3;
  for (let byte = byteAt(path, at, depth); byte >= 0x80; byte = byteAt(path, at, depth)) {
    bytes.push(byte);
    at += step;
  }
  const run = Buffer.from(bytes);
  if (!isUtf8(run)) return NOT_UTF8;
  for (const char of run.toString('utf8')) if (FOLDED_SEPARATORS.has(char.codePointAt(0)!)) return FOLDS;
  return at;
}

/**
 * Why a normal path would read otherwise to a backend than to the gateway,
 * or undefined (at once, for a path without `%`):
 * - escapes of bytes that are not UTF-8: a lenient decoder folds the
 *   overlong `%C0%AE` to a dot, one that drops bad bytes reads
 *   `/adm%80in` as `/admin`, a CESU-8 one joins surrogates;
 * - an encoded `%` before an encoded dot, slash, backslash, semicolon, NUL
 *   or `%u` escape (`%252e%252e`, `%252f`, `%255c`, `%253b`, `%2500`,
 *   `%25u002e`, and the same encoded once more, `%25252e`): harmless to a
 *   backend that decodes once, a traversal or another path to one that
 *   decodes twice;
 * - an encoded `%` before escapes that are not UTF-8 once decoded again
 *   (`%25C0%25AE`);
 * - escapes, once or twice encoded, of a character that NFKC or Windows'
 *   best-fit mapping reads as a dot, slash or backslash (`%EF%BC%8E`,
 *   `%E2%88%95`).
 * An encoded `%` before anything else (`100%25`, `%2520`) is a `%` as
 * written, and passes. The answer is the error the path is refused with.
 */
export function unsafeEscapeError(path: string): UnsafeEscapeError | undefined {
  let at = path.indexOf('%');
  // Where the UTF-8 runs checked so far end: a run is checked once, from its first escape.
  let checked = 0;
  while (at !== -1) {
    const byte = byteAt(path, at, 0);
    if (byte >= 0x80 && at >= checked) {
      checked = endOfUtf8Run(path, at, 0);
      if (checked === FOLDS) return UNSAFE_ESCAPE_ERRORS.foldsToSeparator;
      if (checked < 0) return UNSAFE_ESCAPE_ERRORS.notUtf8;
    } else if (byte === PERCENT) {
      let depth = 1;
      let next = at + 3;
      for (; hexPair(path, next) === PERCENT; next += 2) depth++;
      const again = hexPair(path, next);
      if (again === DOT || again === SLASH || again === BACKSLASH || again === SEMICOLON || again === 0)
        return UNSAFE_ESCAPE_ERRORS.decodedAgain;
      // IIS reads `%u002e` as the character it names.
      if ((path.charCodeAt(next) | 32) === 117 && hexPair(path, next + 1) >= 0 && hexPair(path, next + 3) >= 0)
        return UNSAFE_ESCAPE_ERRORS.decodedAgain;
      if (again >= 0x80 && at >= checked) {
        checked = endOfUtf8Run(path, at, depth);
        if (checked === FOLDS) return UNSAFE_ESCAPE_ERRORS.foldsToSeparator;
        if (checked < 0) return UNSAFE_ESCAPE_ERRORS.notUtf8Again;
      }
    }
    at = path.indexOf('%', at + 1);
  }
  return undefined;
}

/** {@link unsafeEscapeError}'s reason, as the detail of its 400 (a Mapping's prefix is refused with it too). */
export function unsafeEscape(path: string): string | undefined {
  const error = unsafeEscapeError(path);
  return error === undefined ? undefined : ERRORS[error].detail;
}
