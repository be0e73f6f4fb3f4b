/**
 * @module gateway/method-override
 * The methods a backend may take a request for besides the one of its
 * request line. Express's method-override (`X-HTTP-Method-Override`, or the
 * `_method` query argument), Symfony and Laravel (the header, `_method`),
 * Spring's HiddenHttpMethodFilter (`_method`), OData and ASP.NET
 * (`X-HTTP-Method`) act on a POST as the method it names: routed by POST
 * alone, `POST /items/1` with `X-HTTP-Method-Override: DELETE` would reach a
 * Mapping that bypasses auth for POST, and be a DELETE there. The route
 * table holds a request to every method it may be read as
 * (`RouteTable.matchAlike`). A `_method` in a form body is past what a
 * gateway reads.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The override headers, as Node names them; no lookalike spelling of them reaches a backend (gateway/runtime). */
export const OVERRIDE_HEADERS: readonly string[] = ['x-http-method-override', 'x-http-method', 'x-method-override'];
const QUERY_KEY = '_method';

/** Adds the methods a header value names (a list, when the header came twice), upper case. */
function addMethods(into: string[], value: string | string[]): void {
  for (const item of typeof value === 'string' ? [value] : value) {
    for (const token of item.split(',')) {
      const method = token.trim().toUpperCase();
      if (method !== '') into.push(method);
    }
  }
}

/** Whether the query of `url` may hold a `_method` argument: the usual answer, no, without allocating. */
function mayHoldQueryKey(url: string): boolean {
  const q = url.indexOf('?');
  return q !== -1 && url.indexOf(QUERY_KEY, q) !== -1;
}

/**
 * The methods a request may be overridden to by its headers or its query,
 * upper case; undefined when it names none (the usual case, which allocates
 * nothing).
 */
export function overriddenMethods(headers: IncomingHttpHeaders, url: string): string[] | undefined {
  let methods: string[] | undefined;
  for (let i = 0; i < OVERRIDE_HEADERS.length; i++) {
    const value = headers[OVERRIDE_HEADERS[i]];
    if (value !== undefined) addMethods((methods ??= []), value);
  }
  if (mayHoldQueryKey(url)) {
    const query = url.slice(url.indexOf('?') + 1).split('#', 1)[0];
    for (const value of new URLSearchParams(query).getAll(QUERY_KEY)) addMethods((methods ??= []), value);
  }
  return methods?.length ? methods : undefined;
}
