/**
 * @module bookings/app
 * The HTTP face of a booking service: its catalogue and its users' bookings,
 * under a base path (`/v1/hotels`), following the shared conventions of
 * src/http. One implementation serves every kind.
 */
import type Koa from 'koa';
import type { Context } from 'koa';
import { isUtf8 } from 'node:buffer';
import Router from 'koa-router';
import {
  absoluteUrl,
  allowedMethods,
  createServiceApp,
  filterTypes,
  HttpError,
  pageOf,
  parseItemQuery,
  parseListQuery,
  pickFields,
  readJson,
  redirectToSlash,
  routes,
  type CollectionSpec,
} from '../http';
import type { CatalogueItem, KindSpec } from './kinds';
import { DatabaseUnavailableError } from './database';
import { idempotencyKeyOf, IdempotencyKeyInFlight, IdempotencyKeyReused } from './idempotency';
import { bookingRequestParser, refusePastStart } from './request';
import type { BookingStore, CallOptions } from './store';
import { traceOf } from '../tracing';
import { BOOKING_STATUSES, type Booking } from './types';

const UNTRACED: CallOptions = Object.freeze({});

/** What a store call is told of the request: its trace, when it is traced. */
function callOptions(ctx: Context): CallOptions {
  const trace = traceOf(ctx.state);
  return trace === undefined ? UNTRACED : { trace };
}

/** Header through which the gateway names the authenticated user. */
export const USER_HEADER = 'x-travel-user';

/** Request bodies are a few fields; anything much bigger is not a booking. */
export const DEFAULT_BOOKING_BODY_LIMIT = 16 * 1024;

/** A catalogue, indexed. */
export interface Catalogue {
  readonly items: readonly CatalogueItem[];
  readonly byId: ReadonlyMap<string, CatalogueItem>;
}

/** Indexes catalogue entries by id. */
export function catalogueOf(items: readonly CatalogueItem[]): Catalogue {
  return { items, byId: new Map(items.map((item) => [item.id, item])) };
}

export interface BookingAppOptions {
  spec: KindSpec;
  /** Where the service answers: `/v1/hotels`, or `""` for the root. */
  basePath: string;
  store: BookingStore;
  /** The current catalogue: read on every request, so that a reload takes effect at once. */
  catalogue: () => Catalogue;
  /** Trust `X-Forwarded-Proto/-Host` for absolute URLs. */
  proxy: boolean;
  /** Largest booking request body, in bytes. */
  bodyLimit?: number;
  /** The clock that says which start days have passed. */
  now?: () => Date;
}

/**
 * What a store's failures are to the client: a database that is down or
 * slow a 503 to retry (with the same `Idempotency-Key`, a create whose
 * answer was lost is then answered, not made twice), a key used for another
 * request a 422, a key whose first request is still being made a 409.
 */
async function storeErrors(ctx: Context, next: () => Promise<unknown>): Promise<void> {
  try {
    await next();
  } catch (err) {
    if (err instanceof DatabaseUnavailableError)
      throw HttpError.of('BOOKINGS_UNAVAILABLE', { reason: err.message }, { cause: err });
    if (err instanceof IdempotencyKeyReused) throw HttpError.of('IDEMPOTENCY_KEY_REUSED', { cause: err });
    if (err instanceof IdempotencyKeyInFlight) throw HttpError.of('IDEMPOTENCY_KEY_IN_FLIGHT', { cause: err });
    throw err;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ASCII = /^[\x00-\x7f]*$/;

/**
 * The user a header value names. The auth service writes a name as its UTF-8
 * bytes, which Node reads one latin1 character a byte (`Å\x81ukasz` for
 * `Łukasz`): decoded, the name is the one bookings.yaml and responses use.
 * Bytes that are no UTF-8 are refused, so that no two values name one user.
 */
function userName(value: string): string {
  if (ASCII.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  if (!isUtf8(bytes)) throw HttpError.of('BOOKING_USER_NOT_UTF8');
  return bytes.toString('utf8');
}

/** Normalises a base path: `/v1/hotels/` and `/v1/hotels` are `/v1/hotels`; `/` is `""`. */
export function normaliseBasePath(basePath: string): string {
  if (basePath !== '' && !basePath.startsWith('/')) throw new Error(`a base path must start with /, not '${basePath}'`);
  return basePath.replace(/\/+$/, '');
}

/**
 * Builds the Koa app of a booking service. Paths, under `basePath`:
 *
 * - `GET /` the catalogue (also answered on the slashless base path, which
 *   carries `Content-Location` naming the canonical `/`), `GET /<id>` one entry;
 * - `GET /bookings/` the caller's bookings, `POST /bookings/` books (201);
 *   `/bookings` redirects there;
 * - `GET /bookings/<id>` one booking, `DELETE /bookings/<id>` cancels it.
 *
 * Lists take `offset`, `limit`, `fields` and equality filters; single items
 * take `fields`.
 *
 * Bookings need `X-Travel-User` (401 without): the gateway sets it after
 * authentication and removes any the client sent.
 */
export function createBookingApp(options: BookingAppOptions): Koa {
  const { spec, store, catalogue } = options;
  const base = normaliseBasePath(options.basePath);
  const bookingsPath = `${base}/bookings`;
  const parseRequest = bookingRequestParser(spec);
  const now = options.now ?? (() => new Date());
  const bodyLimit = options.bodyLimit ?? DEFAULT_BOOKING_BODY_LIMIT;

  const catalogueSpec: CollectionSpec = {
    fields: spec.catalogueFields,
    filterable: spec.catalogueFilters,
    filterTypes: spec.catalogueFilterTypes,
  };
  const bookingFields = [
    'id',
    spec.itemField,
    'status',
    'user',
    spec.startField,
    spec.lengthField,
    'created_at',
    'cancelled_at',
    'url',
  ];
  const bookingSpec: CollectionSpec = {
    fields: bookingFields,
    filterable: ['status', spec.itemField, spec.startField],
    filterTypes: {
      status: filterTypes.oneOf(BOOKING_STATUSES),
      [spec.itemField]: filterTypes.uuid,
      [spec.startField]: filterTypes.day,
    },
  };

  // Paths of the service as it answers them: absoluteUrl writes them as the
  // client reaches them, under the prefix of a Mapping that rewrote to `base`.
  const itemUrl = (ctx: Context, id: string) => absoluteUrl(ctx, `${base}/${id}`);
  const bookingUrl = (ctx: Context, id: string) => absoluteUrl(ctx, `${bookingsPath}/${id}`);

  /** A booking as it is sent, in the kind's field names. */
  function present(ctx: Context, b: Booking): Record<string, string | number> {
    const out: Record<string, string | number> = {
      id: b.id,
      [spec.itemField]: b.itemId,
      status: b.status,
      user: b.user,
      [spec.startField]: b.start,
      [spec.lengthField]: b.length,
      created_at: b.createdAt,
    };
    if (b.cancelledAt !== undefined) out.cancelled_at = b.cancelledAt;
    out.url = bookingUrl(ctx, b.id);
    return out;
  }

  function userOf(ctx: Context): string {
    const user = ctx.get(USER_HEADER).trim();
    if (!user) throw HttpError.of('BOOKING_USER_MISSING');
    return userName(user);
  }

  /** The id in the path, lower-cased; a malformed id names nothing, so it is a 404 like a missing one. */
  function idOf(ctx: Context): string {
    const id = (ctx.params as { id: string }).id;
    if (!UUID.test(id)) throw HttpError.of('BOOKING_ID_MALFORMED', { id, kind: spec.kind });
    return id.toLowerCase();
  }

  /** Another user's booking is a 404 too: its existence is not the caller's business. */
  function found(booking: Booking | undefined, id: string): Booking {
    if (!booking) throw HttpError.of('BOOKING_NOT_FOUND', { kind: spec.kind, id });
    return booking;
  }

  // Strict and case-sensitive, as the gateway matches prefixes: a path spelled another way
  // (`/v1/hotels/Bookings/`) may have passed another Mapping, with other auth and limits.
  const router = new Router({ strict: true, sensitive: true });

  router.get(`${bookingsPath}/`, async (ctx) => {
    const user = userOf(ctx);
    const query = parseListQuery(ctx.query, bookingSpec);
    const bookings = await store.list(user, callOptions(ctx));
    ctx.body = pageOf(
      ctx,
      bookings.map((b) => present(ctx, b)),
      query,
    );
  });

  router.post(`${bookingsPath}/`, async (ctx) => {
    const user = userOf(ctx);
    const idempotencyKey = idempotencyKeyOf(ctx.req.rawHeaders);
    const request = parseRequest(await readJson(ctx, bodyLimit));
    // Asked of a booking about to be made: a retry is answered with the one its first try made.
    const admit = () => {
      refusePastStart(spec, request, now());
      if (!catalogue().byId.has(request.itemId)) {
        throw HttpError.of('BOOKING_ITEM_UNKNOWN', { field: spec.itemField, kind: spec.kind, id: request.itemId });
      }
    };
    const { booking, replayed } = await store.create(
      { ...request, user },
      { idempotencyKey, admit, ...callOptions(ctx) },
    );
    const body = present(ctx, booking);
    // A retry gets the first answer again, said to be one (as Stripe says it).
    ctx.status = 201;
    ctx.set('Location', body.url as string);
    if (replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.body = body;
  });

  router.all(bookingsPath, redirectToSlash);

  router.get(`${bookingsPath}/:id`, async (ctx) => {
    const user = userOf(ctx);
    const id = idOf(ctx);
    const { fields } = parseItemQuery(ctx.query, bookingSpec);
    ctx.body = pickFields(present(ctx, found(await store.get(user, id, callOptions(ctx)), id)), fields);
  });

  router.delete(`${bookingsPath}/:id`, async (ctx) => {
    const user = userOf(ctx);
    const id = idOf(ctx);
    ctx.body = present(ctx, found(await store.cancel(user, id, callOptions(ctx)), id));
  });

  function listCatalogue(ctx: Context): void {
    const query = parseListQuery(ctx.query, catalogueSpec);
    const items = catalogue().items.map((item) => ({ ...item, url: itemUrl(ctx, item.id) }));
    ctx.body = pageOf(ctx, items, query);
  }

  router.get(`${base}/`, listCatalogue);
  if (base !== '') {
    // Clients of the demo ask for the slashless path and expect a 200, not a redirect.
    router.get(base, (ctx) => {
      listCatalogue(ctx);
      ctx.set('Content-Location', absoluteUrl(ctx, `${base}/`));
    });
  }

  router.get(`${base}/:id`, (ctx) => {
    const id = (ctx.params as { id: string }).id;
    const item = UUID.test(id) ? catalogue().byId.get(id.toLowerCase()) : undefined;
    if (!item) throw HttpError.of('CATALOGUE_ITEM_NOT_FOUND', { kind: spec.kind, id });
    const { fields } = parseItemQuery(ctx.query, catalogueSpec);
    ctx.body = pickFields({ ...item, url: itemUrl(ctx, item.id) }, fields);
  });

  const app = createServiceApp({ proxy: options.proxy });
  app.use(storeErrors);
  app.use(routes(router));
  app.use(allowedMethods(router));
  return app;
}
