/**
 * @module platform/koa
 * What Gatehouse reads or replaces of Koa beyond its documented API, in one
 * place: the fields its request and response keep for themselves, its
 * stream test, its request handling, and its accessors. Written against
 * koa 3.3.0 (pinned in package.json); test/platform/koa.test.ts fails,
 * naming the version, when a Koa release changes any of it.
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import type { ParsedUrlQuery } from 'node:querystring';
import { Stream } from 'node:stream';

/** The Koa release these functions were written against. */
export const KOA_VERSION = '3.3.0';

/** What Koa keeps on its request and response objects, and its typings do not say. */
interface KoaRequestFields {
  _querycache?: Record<string, ParsedUrlQuery>;
}
interface KoaResponseFields {
  _body?: unknown;
  _explicitStatus?: boolean;
  _explicitNullBody?: boolean;
}

/**
 * The cache of parsed query strings Koa keeps per request (`_querycache`),
 * made when missing: a `ctx.query` parsed elsewhere is kept where Koa's own
 * getter would look for it.
 */
export function queryCacheOf(request: Koa.Request): Record<string, ParsedUrlQuery> {
  const fields = request as Koa.Request & KoaRequestFields;
  return (fields._querycache ??= Object.create(null) as Record<string, ParsedUrlQuery>);
}

/**
 * Makes Koa take the response's status for one nothing has set yet: its
 * body setter then makes it 200 (Koa's `_explicitStatus`). For a mounted
 * app that runs on a context another app has already worked on.
 */
export function forgetExplicitStatus(response: Koa.Response): void {
  (response as Koa.Response & KoaResponseFields)._explicitStatus = false;
}

/**
 * Sets a streamed body that watches its response itself, as Koa's `ctx.body`
 * then reads it (Koa's `_body`), without what Koa's setter does with a
 * stream: it ties every stream to its response's end with on-finished (an
 * async resource, and listeners on the response and on a socket that an
 * HTTP/2 connection's streams share), which such a body does not need.
 * The status must be set first; the headers are the caller's to set.
 */
export function setSelfWatchingBody(response: Koa.Response, body: Stream): void {
  (response as Koa.Response & KoaResponseFields)._body = body;
}

/** Whether the middleware set `ctx.body = null` itself (Koa's `_explicitNullBody`): an empty answer, not a 404's text. */
export function bodyExplicitlyNull(response: Koa.Response): boolean {
  return (response as Koa.Response & KoaResponseFields)._explicitNullBody === true;
}

/**
 * Koa's own test of a body that is a stream (`lib/is-stream.js`, which its
 * `ctx.body` setter uses too), written out here since Koa does not export
 * it: a Node stream, or an object with the whole readable-stream surface.
 */
export function isKoaStream(body: unknown): boolean {
  if (body instanceof Stream) return true;
  if (body === null || typeof body !== 'object') return false;
  const s = body as Record<string, unknown>;
  return (
    !!s.readable &&
    typeof s.pipe === 'function' &&
    typeof s.read === 'function' &&
    typeof s.readable === 'boolean' &&
    typeof s.readableObjectMode === 'boolean' &&
    typeof s.destroy === 'function' &&
    typeof s.destroyed === 'boolean'
  );
}

/** How Koa runs a request's middleware and writes its answer: `Application#handleRequest`. */
export type RequestHandling = (ctx: Context, middleware: (ctx: Context) => Promise<unknown>) => Promise<void>;

/** Has `app` run each request with `handling` in place of its own `handleRequest`, which its `callback()` calls. */
export function handleRequestsWith(app: Koa, handling: RequestHandling): void {
  (app as unknown as { handleRequest: RequestHandling }).handleRequest = handling;
}

/** A getter and setter of Koa's request or response prototype. */
export interface KoaAccessor {
  get?: () => unknown;
  set?: (value: unknown) => void;
  enumerable?: boolean;
}

/**
 * Koa's own accessor `name` of `target` (an app's `request` or `response`,
 * made from Koa's prototypes), for a replacement that falls back to it.
 * Throws when Koa has none with a setter: nothing to stand in for.
 */
export function koaAccessor(target: object, name: string): KoaAccessor {
  const own = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(target), name);
  if (own?.set === undefined) throw new Error(`koa ${KOA_VERSION} has no ${name} setter to stand in for`);
  return own;
}
