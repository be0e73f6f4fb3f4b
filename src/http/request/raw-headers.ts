/**
 * @module http/request/raw-headers
 * Header lines as they are on the wire. What a request's raw lines say that
 * `req.headers` hides: Node keeps only the first line of a header such as
 * `Host` or `Authorization`, and reads every value byte as one character.
 * And the one spelling each response header name is written in.
 */
import { isUtf8 } from 'node:buffer';
import { HttpError } from '../../errors';

/**
 * Most header fields a request may carry, as Envoy's `max_headers_count`.
 * Node's parser keeps a request's first fields up to its own count (1000
 * unless the server sets `maxHeadersCount`) and drops the rest from
 * `req.headers` while still framing the body by them: a `Transfer-Encoding`
 * or `Content-Length` past the count would reach the parser and not the
 * checks. A request at the count is refused whole.
 */
export const MAX_REQUEST_HEADERS = 100;

/**
 * The 431 of a request that carries more header fields than
 * {@link MAX_REQUEST_HEADERS}, or more than its parser kept (its connection
 * is to close after it); undefined for any other.
 */
export function headerCountRefusal(rawHeaders: readonly string[]): HttpError | undefined {
  return rawHeaders.length > 2 * MAX_REQUEST_HEADERS
    ? HttpError.of('TOO_MANY_HEADERS', { max: MAX_REQUEST_HEADERS })
    : undefined;
}

/** Whether raw header name `raw` is `name` (lower case) in any case, without a lower-case copy of it. */
function sameName(raw: string, name: string): boolean {
  if (raw.length !== name.length) return false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== name.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Every value of header `name` (lower case) when the request has more than
 * one line of it; undefined for none or one, the usual case, which allocates
 * nothing.
 */
export function repeatedHeader(rawHeaders: readonly string[], name: string): string[] | undefined {
  let found: string | undefined;
  let all: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!sameName(rawHeaders[i], name)) continue;
    if (found === undefined) found = rawHeaders[i + 1];
    else (all ??= [found]).push(rawHeaders[i + 1]);
  }
  return all;
}

/**
 * A header value as the text its bytes spell in UTF-8: Node hands values over
 * one character per byte, so `jürgen` sent as UTF-8 reads `jÃ¼rgen`. An ASCII
 * value (the usual case) is returned as it is, without allocating; bytes that
 * are not UTF-8 are left one character per byte, and a value holding a
 * character above U+00FF was text already.
 */
export function headerText(value: string): string {
  let high = false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // Above 0xff, the text was decoded already (set by code, not read from the wire).
    if (c > 0xff) return value;
    if (c > 0x7f) high = true;
  }
  if (!high) return value;
  const bytes = Buffer.from(value, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : value;
}

/** Names whose usual spelling is not each word capitalised. */
const SPELLINGS: Readonly<Record<string, string>> = {
  'www-authenticate': 'WWW-Authenticate',
  'proxy-authenticate': 'Proxy-Authenticate',
  ratelimit: 'RateLimit',
  'ratelimit-policy': 'RateLimit-Policy',
  etag: 'ETag',
  te: 'TE',
  dnt: 'DNT',
  nel: 'NEL',
  'content-md5': 'Content-MD5',
  'expect-ct': 'Expect-CT',
  'x-xss-protection': 'X-XSS-Protection',
  'x-ua-compatible': 'X-UA-Compatible',
  'x-dns-prefetch-control': 'X-DNS-Prefetch-Control',
  'sec-websocket-accept': 'Sec-WebSocket-Accept',
  'sec-websocket-protocol': 'Sec-WebSocket-Protocol',
  'sec-websocket-extensions': 'Sec-WebSocket-Extensions',
  'sec-websocket-version': 'Sec-WebSocket-Version',
};

/** Spellings worked out so far, by lower-case name; bounded, since an upstream names its own headers. */
const spelled = new Map<string, string>(Object.entries(SPELLINGS));
const MAX_SPELLED = 1024;

/**
 * The spelling a response header is written in: Node writes a name as it
 * is given, and names reach the gateway in lower case from Node's and
 * undici's parsers (an upstream's answer, an auth service's) and from
 * config, while Koa, Node and the gateway's own code capitalise them, so
 * one header went out as `RateLimit:` on one answer and `ratelimit:` on
 * the next. A lower-case name is written with each word capitalised
 * (`Content-Type`, `X-Request-Id`), or as usually spelt (`WWW-Authenticate`,
 * `RateLimit`, `ETag`); a name with a capital in it was spelt by someone
 * (a host app, a rate-limit service) and is kept as it is.
 */
export function headerName(name: string): string {
  const known = spelled.get(name);
  if (known !== undefined) return known;
  if (name !== name.toLowerCase()) return name;
  const spelling = name.replace(/(^|-)([a-z])/g, (_all, dash: string, letter: string) => dash + letter.toUpperCase());
  if (spelled.size < MAX_SPELLED) spelled.set(name, spelling);
  return spelling;
}
