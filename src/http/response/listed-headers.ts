/**
 * @module http/response/listed-headers
 * A ServerResponse that keeps the headers set on it in a list and gives them
 * to Node in one `writeHead` call, as Node's own fast path for headers
 * passed all at once. Node's progressive API keeps a map of `[name, value]`
 * pairs and, when it writes them, lowercases each name again to look for the
 * headers it treats specially; the list is what the same headers cost when
 * passed as an array. Every method answers as Node's: the same validation
 * and errors, the same spellings, order and duplicates on the wire.
 */
import {
  ServerResponse,
  validateHeaderName,
  validateHeaderValue,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
} from 'node:http';

type HeaderValue = number | string | readonly string[];

// What Node's checks accept (`checkIsHttpToken`, `checkInvalidHeaderChar`), tested here without
// the wrapper each of Node's exported checks allocates a call; anything else is given to Node's
// own check, which throws its own error.
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** Throws what Node's `setHeader` throws for `name` and `value`, in the same order. */
function checkHeader(name: string, value: unknown): void {
  if (typeof name !== 'string' || !TOKEN.test(name)) validateHeaderName(name);
  // A number (a Content-Length) is written in characters that are all allowed.
  if (typeof value !== 'number' && (value === undefined || INVALID_VALUE_CHAR.test(value as string)))
    validateHeaderValue(name, value as string);
}

/** Where `name` is in `list` (lower-case name, name as set, value, and so on), or -1. */
function indexOf(list: unknown[], name: string): number {
  // Most lookups spell the name as it was set, or in lower case: no new string for those.
  for (let i = 0; i < list.length; i += 3) if (list[i] === name || list[i + 1] === name) return i;
  const key = name.toLowerCase();
  if (key === name) return -1;
  for (let i = 0; i < list.length; i += 3) if (list[i] === key) return i;
  return -1;
}

/** The names of `list`, lower-case (`offset` 0) or as set (1). */
function namesAt(list: unknown[], offset: 0 | 1): string[] {
  const names: string[] = [];
  for (let i = offset; i < list.length; i += 3) names.push(list[i] as string);
  return names;
}

function oddHeaderList(headers: readonly unknown[]): TypeError {
  const err = new TypeError(
    `The argument 'headers' must have an even number of entries. Received an array of ${headers.length}`,
  );
  (err as TypeError & { code: string }).code = 'ERR_INVALID_ARG_VALUE';
  return err;
}

/**
 * Give it to `http.createServer({ ServerResponse: ListedHeadersResponse })`
 * (or https's): the server's responses then write their headers as one list.
 */
export class ListedHeadersResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Lower-case name, name as set, value: three entries a header, in the order first set. */
  private readonly headerList: unknown[] = [];

  override setHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) return super.setHeader(name, value);
    checkHeader(name, value);
    const list = this.headerList;
    const at = indexOf(list, name);
    if (at === -1) list.push(name.toLowerCase(), name, value);
    else {
      list[at + 1] = name;
      list[at + 2] = value;
    }
    return this;
  }

  override appendHeader(name: string, value: string | readonly string[]): this {
    if (this.headersSent) return super.appendHeader(name, value);
    checkHeader(name, value);
    const list = this.headerList;
    const at = indexOf(list, name);
    if (at === -1) {
      list.push(name.toLowerCase(), name, value);
      return this;
    }
    const prior = list[at + 2];
    const values: unknown[] = Array.isArray(prior) ? prior : [prior];
    if (Array.isArray(value)) for (const one of value) values.push(one);
    else values.push(value);
    list[at + 2] = values;
    return this;
  }

  override getHeader(name: string): number | string | string[] | undefined {
    if (typeof name !== 'string') return super.getHeader(name);
    const at = indexOf(this.headerList, name);
    return at === -1 ? undefined : (this.headerList[at + 2] as number | string | string[]);
  }

  override hasHeader(name: string): boolean {
    if (typeof name !== 'string') return super.hasHeader(name);
    return indexOf(this.headerList, name) !== -1;
  }

  override removeHeader(name: string): void {
    // Node's checks, and what it stops adding itself when a header is removed (Date, Content-Length).
    super.removeHeader(name);
    const at = indexOf(this.headerList, name);
    if (at !== -1) this.headerList.splice(at, 3);
  }

  override getHeaders(): OutgoingHttpHeaders {
    const list = this.headerList;
    const headers = Object.create(null) as OutgoingHttpHeaders;
    for (let i = 0; i < list.length; i += 3) headers[list[i] as string] = list[i + 2] as OutgoingHttpHeader;
    return headers;
  }

  override getHeaderNames(): string[] {
    return namesAt(this.headerList, 0);
  }

  getRawHeaderNames(): string[] {
    return namesAt(this.headerList, 1);
  }

  override writeHead(
    statusCode: number,
    reason?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    const list = this.headerList;
    const status = statusCode | 0;
    // Node's own answer when nothing was set, or for a call it refuses.
    if (list.length === 0 || this.headersSent || status < 100 || status > 999)
      return super.writeHead(statusCode, reason as string, headers);
    const message = typeof reason === 'string' ? reason : undefined;
    const given =
      message === undefined ? (headers ?? (reason as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined)) : headers;
    if (Array.isArray(given)) {
      // Headers given override those set, and may repeat themselves (Node 22's rule).
      if (given.length % 2 !== 0) throw oddHeaderList(given);
      for (let n = 0; n < given.length; n += 2) if (given[n]) this.removeHeader(String(given[n]));
      for (let n = 0; n < given.length; n += 2)
        if (given[n]) this.appendHeader(String(given[n]), given[n + 1] as string);
    } else if (given) {
      for (const name of Object.keys(given)) if (name) this.setHeader(name, given[name] as HeaderValue);
    }
    const flat: unknown[] = new Array((list.length / 3) * 2);
    for (let i = 0, j = 0; i < list.length; i += 3, j += 2) {
      flat[j] = list[i + 1];
      flat[j + 1] = list[i + 2];
    }
    return super.writeHead(statusCode, message, flat as OutgoingHttpHeader[]);
  }
}
