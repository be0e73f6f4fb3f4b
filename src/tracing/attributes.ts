/**
 * @module tracing/attributes
 * The stable HTTP semantic conventions as the gateway fills them: the method
 * as the conventions name it, the protocol version, the host split into
 * address and port, the query with every value redacted. No credential, no
 * `Authorization` value and no query value ever becomes an attribute: a
 * gateway cannot tell a token from a page number.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { HeaderTag } from './settings';
import type { AttributeValue } from './types';

/** The methods the conventions know; any other is `_OTHER`, its spelling in `http.request.method_original`. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** `method` as `http.request.method` holds it. */
export function conventionalMethod(method: string): string {
  return KNOWN_METHODS.has(method) ? method : '_OTHER';
}

/** What takes the place of every query value. */
export const REDACTED = 'REDACTED';

/** The query with its names kept and every value replaced by `REDACTED`: `page=REDACTED&token=REDACTED`. */
export function redactedQuery(query: string): string {
  let out = '';
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    out += `${out === '' ? '' : '&'}${eq === -1 ? part : `${part.slice(0, eq)}=${REDACTED}`}`;
  }
  return out;
}

/** `network.protocol.version`: `1.1`, `1.0`, `2`. */
export function protocolVersion(req: IncomingMessage): string {
  const version = req.httpVersion;
  return version === '2.0' ? '2' : version;
}

/** A `host[:port]` (a bracketed IPv6 address too) as `server.address` and `server.port`; the port is the scheme's when unsaid. */
export function hostParts(host: string, scheme: string): [string, number] {
  const bracket = host.startsWith('[') ? host.indexOf(']') : -1;
  const colon = bracket !== -1 ? host.indexOf(':', bracket) : host.lastIndexOf(':');
  const address = colon === -1 ? host : host.slice(0, colon);
  const port = colon === -1 ? NaN : Number(host.slice(colon + 1));
  return [
    bracket !== -1 ? address.slice(1, bracket) : address,
    Number.isInteger(port) ? port : scheme === 'https' ? 443 : 80,
  ];
}

/** Pseudo-headers, as a TracingService names them, read from HTTP/1.1's own. */
const PSEUDO: Readonly<Record<string, string>> = { ':authority': 'host' };

/** Headers whose values are credentials: never a tag, whatever a TracingService asks. */
export const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
]);

/** The attributes a TracingService's request_header tags read from a request. */
export function headerTagValues(
  tags: readonly HeaderTag[],
  headers: IncomingHttpHeaders,
  method: string,
  path: string,
  scheme: string,
  set: (key: string, value: AttributeValue) => void,
): void {
  for (const tag of tags) {
    let value: string | string[] | undefined;
    if (tag.header === ':method') value = method;
    else if (tag.header === ':path') value = path;
    else if (tag.header === ':scheme') value = scheme;
    else value = headers[PSEUDO[tag.header] ?? tag.header];
    const text = Array.isArray(value) ? value.join(', ') : value;
    if (text !== undefined) set(tag.tag, text);
    else if (tag.fallback !== undefined) set(tag.tag, tag.fallback);
  }
}
