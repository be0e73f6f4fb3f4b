/**
 * @module gateway/match/host-match
 * A Mapping's host constraint (`hostname`, as Emissary 2 and 3 write it, or
 * the older `host`) and how a request's Host is held against it.
 *
 * A pattern is Emissary's DNS glob: `*` (any host), an exact name
 * (`api.example.com`), a first label left open (`*.example.com`: any name
 * ending in `.example.com`, at any depth) or a last one (`api.*`), as
 * Emissary's `hostglob_matches` and Envoy's domain matching read them; Envoy
 * supports no other glob. Names compare without regard to case, as DNS names
 * do.
 *
 * Where Envoy compares the Host as the client wrote it, the gateway compares
 * its normal form: without a trailing dot, and without the port unless the
 * pattern names one (`api.example.com:8443`). With Envoy's default, a client
 * writing `Host: api.example.com:443` (Prometheus, some HTTP libraries) gets
 * a 404, or lands on another Mapping, such as a `*` one without auth: no
 * spelling of a Host may route elsewhere than its normal form.
 *
 * Nor may a Host that is no host at all: Koa, WHATWG URLs and the upstreams
 * read a name out of `api.example.com:x`, `api.example.com,evil`,
 * `u@api.example.com`, `api%2Eexample.com` or `2130706433` (127.0.0.1), which
 * no pattern would match. Such a Host is refused ({@link isHostValue}) before
 * any Mapping is chosen, as RFC 9112 §3.2 asks of a Host that is not valid.
 */
import { isIPv6 } from 'node:net';

/** A compiled host pattern; names are held in lower case. */
export type HostPattern =
  | { readonly kind: 'exact'; readonly name: string; readonly port: number | null }
  /** `*.example.com`: `suffix` is `.example.com`. */
  | { readonly kind: 'suffix'; readonly suffix: string; readonly port: number | null }
  /** `api.*`: `prefix` is `api.`. */
  | { readonly kind: 'prefix'; readonly prefix: string; readonly port: null };

const LABELS = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*$/;
const IPV6 = /^\[[0-9a-f:.]+\]$/;
const PORT = /^[0-9]{1,5}$/;
const DOT = 46;
const COLON = 58;
const OPEN = 91;
/** A port that is written but no number: it matches no pattern. */
const BAD_PORT = -2;
const NO_PORT = -1;

/** What a pattern may look like, for messages. */
export const HOST_FORMS =
  'a host name (api.example.com), *.example.com, api.*, or * for any host, with an optional :port';

/**
 * Reads a pattern as written in a record. Returns the pattern, `null` for
 * `*` (any host: no constraint), or why it cannot be read. `globs: false`
 * reads Emissary's older `host`, an exact name.
 */
export function parseHostPattern(text: string, globs: boolean): HostPattern | null | string {
  const written = text.trim().toLowerCase();
  const notHost = `'${text}' is not ${globs ? HOST_FORMS : 'a host name, with an optional :port'}`;
  if (written === '*')
    return globs
      ? null
      : 'is an exact match, and * matches no host: write hostname: "*", or leave host out, for any host';
  if (/[/@?#\s]/.test(written)) return notHost;
  let name = written;
  let port: number | null = null;
  let colon = name.lastIndexOf(':');
  if (name.startsWith('[')) {
    // An IPv6 literal holds colons of its own: a port can only follow its `]`.
    const close = name.indexOf(']');
    if (close < 0 || (close + 1 < name.length && name.charCodeAt(close + 1) !== COLON)) return notHost;
    colon = close + 1 < name.length ? close + 1 : -1;
  }
  if (colon >= 0) {
    const digits = name.slice(colon + 1);
    if (!PORT.test(digits) || Number(digits) < 1 || Number(digits) > 65535)
      return `has a port that is no number from 1 to 65535: '${text}'`;
    port = Number(digits);
    name = name.slice(0, colon);
  }
  // `example.com.` is the same name, fully qualified.
  if (name.endsWith('.') && name !== '.') name = name.slice(0, -1);
  if (name.includes('*')) {
    if (!globs) return `is an exact match and may not hold *: write hostname for a glob (*.example.com, api.*)`;
    if (name.startsWith('*.') && LABELS.test(name.slice(2))) return { kind: 'suffix', suffix: name.slice(1), port };
    if (name.endsWith('.*') && LABELS.test(name.slice(0, -2))) {
      return port === null
        ? { kind: 'prefix', prefix: name.slice(0, -1), port }
        : `may not name a port after a final *: '${text}'`;
    }
    return `'${text}' is no glob Envoy matches: a * stands alone (any host), for the first label (*.example.com) or for the last (api.*)`;
  }
  if (IPV6.test(name)) {
    const canonical = canonicalIPv6(name);
    if (canonical === null) return notHost;
    name = canonical;
  } else if (!LABELS.test(name)) {
    return notHost;
  }
  return { kind: 'exact', name, port };
}

/** Whether `c` may stand in a label of a host name: a letter, a digit, `-` or `_` (which service names hold). */
function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95;
}

/**
 * Whether the label from `start` to `end` is a number as a WHATWG URL reads
 * one (`10`, `0x0A`): a name that ends in one is an IPv4 address to it.
 */
function isNumberLabel(host: string, start: number, end: number): boolean {
  let i = start;
  if (end - start >= 2 && host.charCodeAt(i) === 48 && (host.charCodeAt(i + 1) | 32) === 120) {
    for (i += 2; i < end; i++) {
      const c = host.charCodeAt(i) | 32;
      if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
    }
    return true;
  }
  for (; i < end; i++) {
    const c = host.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * Whether `host` up to `end` is a host name (labels of letters, digits, `-`
 * and `_`, none empty, then an optional dot) or an IPv4 address written as
 * four decimal numbers. Any other spelling of an address (`10.1`,
 * `0x7f.0.0.1`, `010.0.0.1`, `167772161`) is none: URLs read it as the
 * address it names, the gateway could only hold it against patterns as a name.
 */
function isName(host: string, end: number): boolean {
  if (end > 1 && host.charCodeAt(end - 1) === DOT) end--;
  let start = 0;
  let last = 0;
  for (let i = 0; i <= end; i++) {
    const c = i === end ? DOT : host.charCodeAt(i);
    if (c === DOT) {
      if (i === start) return false;
      last = start;
      start = i + 1;
    } else if (!isLabelChar(c)) {
      return false;
    }
  }
  return !isNumberLabel(host, last, end) || isDottedQuad(host, end);
}

/** Whether `host` up to `end` is four decimal numbers from 0 to 255, without leading zeros, as `net.isIPv4` wants them. */
function isDottedQuad(host: string, end: number): boolean {
  let parts = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= end; i++) {
    const c = i === end ? DOT : host.charCodeAt(i);
    if (c === DOT) {
      if (digits === 0 || value > 255 || (digits > 1 && host.charCodeAt(i - digits) === 48)) return false;
      parts++;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      value = value * 10 + c - 48;
      digits++;
    } else {
      return false;
    }
  }
  return parts === 4;
}

/**
 * Whether a request's Host (or the authority that stands for it) is one the
 * gateway routes: empty (RFC 9112 §3.2 lets a client send it so), or a host
 * name, a dotted IPv4 address or a bracketed IPv6 one, then an optional port
 * of up to five digits (65535 at most). Anything else (user information, a
 * path, a list, spaces, percent-escapes, bytes beyond ASCII, an empty label)
 * is no host. Allocates nothing for a name.
 */
export function isHostValue(host: string): boolean {
  if (host.length === 0) return true;
  let end: number;
  if (host.charCodeAt(0) === OPEN) {
    const close = host.indexOf(']');
    // A zone (`%eth0`) names an interface of the client's, nothing here.
    if (close < 0 || host.lastIndexOf('%', close) >= 0 || !isIPv6(host.slice(1, close))) return false;
    end = close + 1;
    if (end < host.length && host.charCodeAt(end) !== COLON) return false;
  } else {
    const colon = host.indexOf(':');
    end = colon < 0 ? host.length : colon;
    if (!isName(host, end)) return false;
  }
  return end === host.length || portAt(host, end + 1) !== BAD_PORT;
}

/**
 * An IPv6 literal (`[0:0::1]`) in the one spelling WHATWG URLs give it, and
 * so Koa's `ctx.hostname` (`[::1]`); null when it is no IPv6 address.
 */
export function canonicalIPv6(literal: string): string | null {
  if (literal.indexOf('%') >= 0 || !isIPv6(literal.slice(1, -1))) return null;
  return new URL(`http://${literal}`).hostname;
}

/** How specific a pattern is, for match order: an exact name first, then the longer glob, a named port before none. */
export function hostSpecificity(pattern: HostPattern | null): number {
  if (pattern === null) return 0;
  const port = pattern.port === null ? 0 : 1000;
  switch (pattern.kind) {
    case 'exact':
      return 3_000_000 + port + pattern.name.length;
    case 'suffix':
      return 2_000_000 + port + pattern.suffix.length;
    default:
      return 1_000_000 + pattern.prefix.length;
  }
}

/** The pattern as it is shown (diag, `gatehouse check`). */
export function formatHostPattern(pattern: HostPattern | null): string {
  if (pattern === null) return '*';
  const port = pattern.port === null ? '' : `:${pattern.port}`;
  switch (pattern.kind) {
    case 'exact':
      return pattern.name + port;
    case 'suffix':
      return `*${pattern.suffix}${port}`;
    default:
      return `${pattern.prefix}*`;
  }
}

/** The port written from `start` to the end of `host`: NO_PORT when empty, BAD_PORT when no port. */
function portAt(host: string, start: number): number {
  if (start === host.length) return NO_PORT;
  let port = 0;
  for (let i = start; i < host.length; i++) {
    const d = host.charCodeAt(i) - 48;
    if (d < 0 || d > 9 || i - start >= 5) return BAD_PORT;
    port = port * 10 + d;
  }
  return port <= 65535 ? port : BAD_PORT;
}

/** Whether `host` from `at` holds `lower` (lower case), ASCII letters compared in either case. */
function holdsAt(host: string, at: number, lower: string): boolean {
  for (let i = 0; i < lower.length; i++) {
    let c = host.charCodeAt(at + i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Whether a request's Host header matches a pattern: its name in any case,
 * without a trailing dot; its port only when the pattern names one. A
 * request without Host matches no pattern. Allocates nothing.
 */
export function hostMatches(pattern: HostPattern, host: string | undefined): boolean {
  if (host === undefined) return false;
  let end = host.length;
  let port = NO_PORT;
  if (host.charCodeAt(0) === OPEN) {
    const close = host.indexOf(']');
    if (close < 0) return false;
    end = close + 1;
    if (end < host.length) {
      if (host.charCodeAt(end) !== COLON) return false;
      port = portAt(host, end + 1);
    }
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) {
      port = portAt(host, colon + 1);
      end = colon;
    }
  }
  if (port === BAD_PORT) return false;
  if (end > 1 && host.charCodeAt(end - 1) === DOT) end--;
  if (pattern.port !== null && port !== pattern.port) return false;
  switch (pattern.kind) {
    case 'exact':
      if (end === pattern.name.length && holdsAt(host, 0, pattern.name)) return true;
      // An IPv6 address has many spellings; Koa's ctx.hostname reads `[0:0::1]` as `[::1]`.
      return (
        pattern.name.charCodeAt(0) === OPEN &&
        host.charCodeAt(0) === OPEN &&
        canonicalIPv6(host.slice(0, end)) === pattern.name
      );
    case 'suffix':
      // `*.example.com` wants a label before `.example.com`.
      return end > pattern.suffix.length && holdsAt(host, end - pattern.suffix.length, pattern.suffix);
    default:
      return end > pattern.prefix.length && holdsAt(host, 0, pattern.prefix);
  }
}
