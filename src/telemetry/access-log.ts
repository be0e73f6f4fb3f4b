/**
 * @module telemetry/access-log
 * The access log middleware: one JSON line per request, the request metrics
 * and the per-route counters. It is meant to be the outermost middleware
 * (before the error handler), so that the status it reads is the one sent.
 */
import type { Context, Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import { Stream } from 'node:stream';
import { performance } from 'node:perf_hooks';
import {
  answeredError,
  connectionNamed,
  cutShortBy,
  headerName,
  headerText,
  HttpError,
  protocolOf,
  statusOf,
} from '../http';
import { accessLineWriter, type AccessLogEntry } from './access-line';
import type { Logger } from './logger';
import { UNMATCHED_ROUTE, type Metrics } from './metrics';
import type { RouteCounters } from './route-counters';
import { traceOf } from '../tracing';

export interface AccessLogOptions {
  logger: Logger;
  metrics?: Metrics;
  counters?: RouteCounters;
  /** The request id header, taken from the client when well-formed. Default `x-request-id`. */
  requestIdHeader?: string;
  /**
   * Who made the request, read after the request is answered. Default: the
   * `x-travel-user` request header, which the auth stage sets after a
   * successful check (and removes from the client's request before).
   */
  userOf?: (ctx: Context) => string | undefined;
  /** At most this many query argument names are logged. Default 20. */
  maxQueryKeys?: number;
}

/** What nginx logs for a request whose client closed the connection before the answer began. */
const CLIENT_CLOSED_REQUEST = 499;
/** What a request the server stopped before it answered is logged and counted as. */
const SERVICE_UNAVAILABLE = 503;

// Safe to log and to hand on: no spaces, quotes or control characters.
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The request id a client sent, when it is well-formed (safe to log and to hand on); undefined otherwise. */
export function wellFormedRequestId(sent: string | string[] | undefined): string | undefined {
  return typeof sent === 'string' && REQUEST_ID.test(sent) ? sent : undefined;
}

/**
 * The route name of a request no Mapping served: the one the gateway's own
 * path that answered it gave (`ctx.state.route`: its health probes, its
 * metrics), else `unmatched`.
 */
function ownRoute(route: unknown): string {
  return typeof route === 'string' ? route : UNMATCHED_ROUTE;
}

/** `connection` without the token `name`; undefined when nothing is left. */
function withoutToken(connection: string, name: string): string | undefined {
  const kept = connection.split(',').filter((token) => token.trim().toLowerCase() !== name);
  return kept.length > 0 ? kept.join(',') : undefined;
}

function defaultUser(ctx: Context): string | undefined {
  const user = ctx.request.headers['x-travel-user'];
  // The auth service sends a name's UTF-8 bytes.
  return user === undefined ? undefined : headerText(Array.isArray(user) ? user[0] : user);
}

/**
 * Logs every request once it is answered, including those that failed below,
 * and counts it in `metrics` and `counters`. Sets `ctx.state.requestId`, the
 * `X-Request-Id` response header, and the request header when the client sent
 * none, so that upstreams see the same id. Never logs headers, query values
 * or bodies.
 */
export function accessLog(options: AccessLogOptions): Middleware {
  const { metrics, counters } = options;
  // An access line holds only fixed fields, none of which can carry a
  // credential: it skips the redaction every other line of the logger pays for.
  const lines = accessLineWriter(options.logger);
  const idHeader = (options.requestIdHeader ?? 'x-request-id').toLowerCase();
  const idSpelling = headerName(options.requestIdHeader ?? 'X-Request-Id');
  const userOf = options.userOf ?? defaultUser;
  const maxQueryKeys = options.maxQueryKeys ?? 20;

  function finish(
    ctx: Context,
    start: number,
    method: string,
    path: string,
    querystring: string,
    remote: string,
    id: string,
    status: number,
    aborted: boolean,
    failure?: unknown,
  ): void {
    const elapsedMs = performance.now() - start;
    // Gone before any answer: whatever status the context holds (Koa's 404 to
    // begin with) was never sent. nginx's 499 says what happened, and keeps
    // the 404s of the metrics those of paths that match nothing.
    const cutBy = aborted ? cutShortBy(ctx.res) : undefined;
    const unanswered = aborted && !ctx.res.headersSent;
    if (unanswered) status = cutBy === 'shutdown' ? SERVICE_UNAVAILABLE : CLIENT_CLOSED_REQUEST;
    const mapping = ctx.state.mapping as { name?: unknown } | undefined;
    const route = typeof mapping?.name === 'string' ? mapping.name : ownRoute(ctx.state.route);
    const protocol = protocolOf(ctx.req);
    metrics?.recordRequest(route, method, status, elapsedMs / 1000, protocol);
    counters?.record(route, status);
    if (!lines.enabled()) return;
    const entry: AccessLogEntry = {
      req_id: id,
      method,
      path,
      route,
      status,
      duration_ms: Math.round(elapsedMs * 100) / 100,
      remote,
      protocol,
    };
    if (querystring) entry.query = Object.keys(ctx.request.query).slice(0, maxQueryKeys);
    const user = userOf(ctx);
    if (user) entry.user = user;
    if (status >= 400 && !unanswered) {
      // Which of the registry's errors it was answered with, when it was one.
      const error = failure instanceof HttpError ? failure.code : answeredError(ctx.res);
      if (error !== undefined) entry.error = error;
    }
    // Cut short by its upstream or the shutdown, the answer was not left by the client.
    if (cutBy === 'upstream') entry.upstream_reset = true;
    else if (cutBy === 'shutdown') entry.cut_at_shutdown = true;
    else if (aborted) entry.aborted = true;
    const trace = traceOf(ctx.state);
    if (trace !== undefined) {
      entry.trace_id = trace.traceId;
      entry.span_id = trace.spanId;
    }
    lines.write(entry);
  }

  return async function logAccess(ctx, next) {
    const start = performance.now();
    // Read from the request itself: ctx's getters only pass on to it.
    const request = ctx.request;
    // Read before the request goes on: routing may rewrite the URL below.
    const method = request.method;
    const path = request.path;
    const querystring = request.querystring;
    // So is the client's address: a forwarded body may take the socket with it for a while.
    const remote = request.ip;
    const headers = request.headers;
    let sent = headers[idHeader];
    // A client that names the id header in Connection made its copy hop-by-hop:
    // it is not the request's id, and the gateway drops whatever that header
    // holds before routing. The id made here instead is the gateway's word,
    // so it is taken off that list and reaches the backend as it reaches the
    // log and the response.
    if (connectionNamed(headers.connection)?.includes(idHeader)) {
      sent = undefined;
      const connection = withoutToken(headers.connection as string, idHeader);
      if (connection === undefined) delete headers.connection;
      else headers.connection = connection;
    }
    let id = wellFormedRequestId(sent);
    if (id === undefined) {
      id = randomUUID();
      headers[idHeader] = id;
    }
    ctx.state.requestId = id;

    let failure: unknown;
    let failed = false;
    try {
      await next();
    } catch (err) {
      failed = true;
      failure = err;
      throw err;
    } finally {
      const res = ctx.res;
      // Straight on the response: ctx.set builds arrays for each header it sets.
      if (!res.headersSent) res.setHeader(idSpelling, id);
      // A streamed body (a proxied response) or a handler that writes itself is
      // still under way: log when it ends, with the time it really took.
      if (
        !failed &&
        !res.writableEnded &&
        !res.destroyed &&
        (ctx.response.body instanceof Stream || ctx.respond === false)
      ) {
        // A switch of protocols (101) has no response to finish: its connection closing ends it.
        res.once('close', () =>
          finish(
            ctx,
            start,
            method,
            path,
            querystring,
            remote,
            id,
            res.statusCode,
            !res.writableFinished && res.statusCode !== 101,
          ),
        );
      } else {
        const status = failed ? statusOf(failure) : ctx.response.status;
        finish(
          ctx,
          start,
          method,
          path,
          querystring,
          remote,
          id,
          status,
          res.destroyed && !res.writableFinished,
          failure,
        );
      }
    }
  };
}

/** A request the HTTP server answered itself, before any middleware ran. */
export interface RejectedRequest {
  /** The status it was answered with (400, 408, 431, 501). */
  status: number;
  /** The method, when the request line could be read. */
  method?: string;
  /** The request target, when it could be read. */
  target?: string;
  /** The client's address. */
  remote?: string;
  /** The request id it was answered with; a new one when none is given. */
  requestId?: string;
  /** HTTP/1.1 or HTTP/2, when the request could be read that far. */
  protocol?: string;
}

/**
 * Logs and counts the requests the HTTP server answers without the app (a
 * malformed request, headers over the limit, CONNECT), so that they show in
 * the access log, the metrics and the counters as every other request does:
 * route `unmatched`, a new request id, `-` for what could not be read, and
 * `error`, the registry's code of the error it was answered with.
 */
export function rejectedRequestLog(
  options: Pick<AccessLogOptions, 'logger' | 'metrics' | 'counters'>,
): (request: RejectedRequest, error?: string) => void {
  const { metrics, counters } = options;
  const lines = accessLineWriter(options.logger);
  return (request, error) => {
    const method = request.method ?? '-';
    metrics?.recordRequest(UNMATCHED_ROUTE, method, request.status, 0, request.protocol);
    counters?.record(UNMATCHED_ROUTE, request.status);
    if (!lines.enabled()) return;
    const entry: AccessLogEntry = {
      req_id: request.requestId ?? randomUUID(),
      method,
      path: request.target ?? '-',
      route: UNMATCHED_ROUTE,
      status: request.status,
      duration_ms: 0,
      remote: request.remote ?? '-',
    };
    if (request.protocol !== undefined) entry.protocol = request.protocol;
    if (error !== undefined) entry.error = error;
    lines.write(entry);
  };
}
