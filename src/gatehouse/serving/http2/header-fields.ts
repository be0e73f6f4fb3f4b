/**
 * @module gatehouse/serving/http2/header-fields
 * The header fields of an HTTP/2 answer as the app sets them through the
 * HTTP/1.1 surface (./response): checked as Node checks them, named in the
 * lower case HTTP/2 sends, those of one HTTP/1.1 connection named for
 * dropping (RFC 9113 §8.2.2), and those HTTP/2 carries once.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';

/** Connection-specific headers, never sent over HTTP/2 (RFC 9113 §8.2.2). */
export const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** Headers HTTP/2 carries once (Node refuses a list for them): the first of a list is sent. */
export const SINGLE_VALUE = new Set(['content-type', 'content-length', 'content-encoding', 'location', 'etag', 'date']);

/** A header's value as the app sets it. */
export type HeaderValue = number | string | readonly string[];

// What Node's checks accept, tested without the call each of its exported checks costs.
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** Throws Node's own error for a name or value Node's response refuses. */
export function checkHeader(name: string, value: HeaderValue | undefined): void {
  if (typeof name !== 'string' || !TOKEN.test(name)) validateHeaderName(name);
  if (typeof value === 'number') return;
  if (value === undefined) validateHeaderValue(name, value as unknown as string);
  else if (typeof value === 'string') {
    if (INVALID_VALUE_CHAR.test(value)) validateHeaderValue(name, value);
  } else for (const one of value) if (INVALID_VALUE_CHAR.test(one)) validateHeaderValue(name, one);
}

/** Header names set before, by the lower-case form HTTP/2 sends: names come from code and upstreams, a few dozen. */
const LOWER = new Map<string, string>();
const MAX_NAMES = 1024;

/** `name` in lower case, remembered for the next answer that sets it. */
export function lowerCase(name: string): string {
  let lower = LOWER.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (LOWER.size < MAX_NAMES) LOWER.set(name, lower);
  }
  return lower;
}

/** The error Node's response throws for a header set once the headers are sent. */
export function headersSentError(): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error('Cannot set headers after they are sent to the client');
  err.code = 'ERR_HTTP_HEADERS_SENT';
  return err;
}
