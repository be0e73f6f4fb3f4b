/**
 * @module http/request/query
 * `ctx.query` in time linear in the query string. Koa 3 reads it by asking
 * `URLSearchParams.getAll` once for every argument, each a pass over all of
 * them: `?a&a&a...` within Node's 16 KiB of headers (8,000 arguments) held
 * the event loop for a second, on any path, since the access log reads the
 * names of every request's query arguments.
 */
import type Koa from 'koa';
import type { ParsedUrlQuery } from 'node:querystring';
import { queryCacheOf } from '../../platform';

/**
 * The query string's arguments as Koa gives them: a string for an argument
 * given once, an array for one given more often, in the order of their
 * first appearance; `__proto__` is an argument like any other.
 */
export function parseQuery(text: string): ParsedUrlQuery {
  // Most requests have none: no parser, no map for it.
  if (text === '') return {};
  const grouped = new Map<string, string[]>();
  for (const [key, value] of new URLSearchParams(text)) {
    const values = grouped.get(key);
    if (values === undefined) grouped.set(key, [value]);
    else values.push(value);
  }
  const query: ParsedUrlQuery = {};
  for (const [key, values] of grouped) {
    Object.defineProperty(query, key, {
      value: values.length === 1 ? values[0] : values,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return query;
}

/** Makes `app`'s `ctx.query` (and `ctx.request.query`) parse with {@link parseQuery}, cached per request as Koa caches it. */
export function linearQuery(app: Koa): Koa {
  const koas = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(app.request), 'query');
  Object.defineProperty(app.request, 'query', {
    get(this: Koa.Request): ParsedUrlQuery {
      const text = this.querystring;
      // Kept where Koa's own getter keeps it, for any code that reads it through Koa.
      const cache = queryCacheOf(this);
      return (cache[text] ??= parseQuery(text));
    },
    // Setting it writes the query string, as Koa does: Koa's own setter, called on the request as Koa calls it.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- a property descriptor's setter, bound by the property
    set: koas?.set,
    configurable: true,
    enumerable: koas?.enumerable ?? false,
  });
  return app;
}
