/**
 * @module http/hop-by-hop
 * Headers that describe one connection rather than the message (RFC 9110
 * §7.6.1), those a message's `Connection` header names as such, and those
 * that frame a message's body. Whoever sends a message writes these for the
 * connection and the body it has: they are never passed on from another
 * message. Every list of such headers in the project is built from these.
 */

/**
 * The hop-by-hop headers by name, lower case: RFC 9110's, HTTP/1.0's
 * `Keep-Alive` and `Proxy-Connection`, `Trailer`, which announces trailers
 * the receiving hop may not pass on, and `HTTP2-Settings`, the settings of
 * an h2c upgrade of one connection (RFC 7540 §3.2.1), which Node refuses to
 * send over HTTP/2 by throwing. `Proxy-*` aside (see {@link isHopByHop}).
 */
export const HOP_BY_HOP_HEADERS: readonly string[] = [
  'connection',
  'http2-settings',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

const HOP_BY_HOP = new Set(HOP_BY_HOP_HEADERS);

/**
 * Whether a header (lower-case name) belongs to one connection and is never
 * passed on: one of {@link HOP_BY_HOP_HEADERS}, or a `Proxy-*` header, which
 * is between a client and the proxy it names.
 */
export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith('proxy-');
}

/**
 * The hop-by-hop headers by name and `Content-Length`: how a message is
 * framed and its connection kept. No service's answer, record or client may
 * set these on a message the gateway sends; it writes them itself.
 */
export const FRAMING_HEADERS: ReadonlySet<string> = new Set([...HOP_BY_HOP_HEADERS, 'content-length']);

/** Connection options that name no header. */
const OPTIONS = new Set(['', 'close', 'keep-alive', 'upgrade', 'connection']);

/**
 * The header names a `Connection` value lists, lower-case, besides the
 * connection options: hop-by-hop for that message, on top of
 * {@link isHopByHop}'s. Null when it names none.
 */
export function connectionNamed(value: string | string[] | undefined): string[] | null {
  if (value === undefined || isPlainOption(value)) return null;
  const text = (Array.isArray(value) ? value.join(',') : value).toLowerCase();
  let named: string[] | null = null;
  for (const token of text.split(',')) {
    const name = token.trim();
    if (!OPTIONS.has(name)) (named ??= []).push(name);
  }
  return named;
}

/** `keep-alive` or `close` as clients write them: the common case, told without allocating. */
function isPlainOption(value: string | string[]): boolean {
  return value === 'keep-alive' || value === 'close' || value === 'Keep-Alive' || value === 'Close';
}
