/**
 * @module gateway/admit
 * What the gateway refuses, in order: the gateway's one middleware, each
 * step named after what it refuses or drops, then the routed part
 * (./routed). Every refusal is an {@link HttpError} answered with the error
 * body.
 *
 *  1. an identity or a path a client claims: `X-Travel-User`, path overrides,
 *     proxy headers from an untrusted client (dropped);
 *  2. a framing the gateway cannot vouch for: a request pipelined behind an
 *     upgrade, more header lines than were parsed (431), a transfer coding
 *     it cannot pass on (400, 501); the connection is closed after
 *     (./request/framing);
 *  3. a host it cannot route by: two Host lines, an absolute target it
 *     cannot use, a malformed Host or X-Forwarded-Host (400)
 *     (./request/request-target), and a request on an HTTPS connection
 *     made for another name whose host asks more of TLS (421)
 *     (./request/secure-host);
 *  4. a path it cannot normalise (400); then the gateway's own paths are
 *     answered;
 *  5. any request while no configuration is loaded (503), and one from an
 *     address the Module's `ip_allow` / `ip_deny` refuses (403); with Hosts,
 *     a host no Host serves (404), and a request over cleartext that its
 *     Host redirects (301) or rejects (403) (./request/secure-host);
 *  6. headers `Connection` nominates, and lookalikes of those the routes
 *     read (dropped);
 *  7. a method override that would route elsewhere (400), and a path no
 *     route matches (404); a CORS preflight is answered by its policy
 *     (./preflight);
 *  8. escapes its route does not allow in a path (400);
 *  9. a body declared past the limit (413, answered once routed, with the
 *     route's response edits); a body of unknown length is counted;
 * 10. a POST whose body names a method override that would route elsewhere
 *     (400);
 * then, once routed: auth, the rate limit, the forward (./routed); and
 * whatever answered, an error status the route's (or the Module's)
 * `error_response_overrides` names gets its body.
 */
import type { Context } from 'koa';
import {
  basePath,
  hasUnsizedBody,
  HttpError,
  isGrpcRequest,
  ORIGINAL_PATH,
  setPath,
  type ErrorResponder,
} from '../http';
import type { Route } from './match/route-table';
import { OWN_PREFIX } from './own-paths';
import { DEFAULT_BODY_LIMIT, declaredTooLarge, guardStreamedBody } from './request/body-limit';
import { dropClaimedUser, dropPathOverrides } from './request/headers/claimed-user';
import { dropNominatedHeaders } from './request/headers/connection-named';
import { dropLookalikes } from './request/headers/lookalike-headers';
import { dropProxyOwnedHeaders } from './request/headers/proxy-owned';
import { bodyMayOverride, refuseBodyOverride } from './request/override/body-override';
import { overriddenMethods } from './request/override/method-override';
import { normalisePath, unsafeEscapeError, withoutParameters } from './request/path';
import { refuseMalformedHosts, refuseRepeatedHost, toOriginForm } from './request/request-target';
import { refuseHeaderOverflow, refusePipelinedAfterUpgrade, refuseUnvouchedBody } from './request/framing';
import { answerPreflight, isPreflight, requestedMethod } from './preflight';
import { claimedClientCert, hostRoutes, hostsDecide, refuseMisdirected, tellClientCert } from './request/secure-host';
import type { RunRouted } from './routed';
import { applyErrorOverrides } from './error-overrides';
import { answerAsGrpc, readArrivedCall } from './grpc-reply';
import { grpcWebOf, markGrpcWeb } from './upstream/grpc';
import { REROUTED_STATE } from './reroute';
import { isGrpcTarget, type RouteTarget, type Runtime } from './types';
import { NO_TRACING, type GatewayTracing } from '../tracing';

/** What the gateway's middleware is built from. */
export interface AdmissionOptions {
  /** The runtime a request starts with, or null while no configuration is loaded. */
  readonly runtime: () => Runtime | null;
  /** Answers the gateway's own paths: resolves true when it answered `path`. */
  readonly ownPath: (ctx: Context, path: string) => Promise<boolean>;
  /** Largest request body, in bytes. Default {@link DEFAULT_BODY_LIMIT}. */
  readonly bodyLimit?: number;
  readonly errors: ErrorResponder;
  /** Runs a request once it is admitted and routed. */
  readonly routed: RunRouted;
  /** Told of a retired runtime once its last request is done, to be closed. */
  readonly released: (rt: Runtime) => void;
  /** The HTTPS port a cleartext request is redirected to when it named a port; undefined for none. */
  readonly httpsPort?: () => number | undefined;
  /** Read once a request: while its `requests` is null, nothing is traced and nothing made for it. */
  readonly tracing?: GatewayTracing;
}

function refuseUnconfigured(rt: Runtime | null): Runtime {
  if (rt === null) throw HttpError.of('NO_CONFIGURATION');
  return rt;
}

/** Escapes that reach a backend as another path than the one matched, unless the route allows them. */
function refuseUnsafeEscapes(route: Route<RouteTarget>, path: string): void {
  if (route.mapping.allow_unsafe_path_escapes) return;
  const unsafe = unsafeEscapeError(path);
  if (unsafe !== undefined) throw HttpError.of(unsafe);
}

async function notFound(): Promise<never> {
  throw HttpError.of('NOT_FOUND');
}

/** The route's error_response_overrides (the Module's for an answer no route gave), applied to the answer. */
function overrideErrorBody(ctx: Context, rt: Runtime, matched: Route<RouteTarget> | undefined): void {
  const route = (ctx.state[REROUTED_STATE] as Route<RouteTarget> | undefined) ?? matched;
  const target = route?.target;
  const overrides = target === undefined ? rt.errorOverrides : target.errorOverrides;
  if (overrides === null || ctx.status < 400) return;
  applyErrorOverrides(ctx, overrides, {
    route: route?.mapping.name,
    cluster: target?.kind === 'remote' ? target.upstream.cluster.name : undefined,
  });
}

/**
 * Builds the gateway's one middleware: admits the request through the steps
 * above and routes it, and answers every error on its way, and an error
 * status left without a body, with the error body, as the error handler in
 * front of it would, one async step less.
 */
export function createAdmission(options: AdmissionOptions): (ctx: Context) => Promise<void> {
  const { runtime, ownPath, errors, routed, released } = options;
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const tracing = options.tracing ?? NO_TRACING;

  return async function admit(ctx: Context): Promise<void> {
    // Known once they are: whose error_response_overrides the answer gets.
    let known: Runtime | null = null;
    let routedBy: Route<RouteTarget> | undefined;
    // Before any check: a refused request is traced too, with the check that refused it.
    const tracer = tracing.requests;
    const trace = tracer === null ? null : tracer.start(ctx);
    try {
      // 1. First of all: without an AuthService, on a path no route matches, or on
      // the gateway's own paths, a client's X-Travel-User would otherwise reach
      // a backend or the access log as if the auth service had named that user.
      const req = ctx.req;
      // Read before it is dropped: a verified client may speak for the clients behind it (FORWARD_ONLY, APPEND_FORWARD).
      const claimedCert = claimedClientCert(ctx);
      dropClaimedUser(req);
      dropPathOverrides(req);
      dropProxyOwnedHeaders(req, ctx.request.app.proxy);
      // 2.
      refusePipelinedAfterUpgrade(ctx);
      refuseHeaderOverflow(ctx);
      refuseUnvouchedBody(ctx);
      // 3.
      refuseRepeatedHost(req.rawHeaders);
      toOriginForm(ctx);
      const host = refuseMalformedHosts(ctx);
      refuseMisdirected(ctx, host);
      // 4. Read from the request itself: ctx's getters only pass on to it.
      const request = ctx.request;
      const method = request.method;
      const seen = request.path;
      const path = normalisePath(seen);
      if (path.startsWith(OWN_PREFIX) && (await ownPath(ctx, path))) return errors.fillEmpty(ctx);
      // 5.
      const rt = refuseUnconfigured(runtime());
      known = rt;
      if (rt.config.module?.config.enable_grpc_web === true) markGrpcWeb(ctx);
      // The Module's ip_allow / ip_deny: before a route is looked at, so before auth and any preflight.
      if (rt.addressFilter !== null) rt.addressFilter(ctx);
      const table = hostsDecide(rt) ? hostRoutes(ctx, rt, host, options.httpsPort?.()) : rt.table;
      if (table === null) return errors.fillEmpty(ctx);
      if (rt.tls.clientCert.forward !== 'SANITIZE') tellClientCert(ctx, rt, claimedCert);
      // 6. Before matching: a backend reads `X_Api_Key` as the `X-Api-Key` a label or a Mapping's `headers` never saw.
      const headers = req.headers;
      dropNominatedHeaders(headers);
      dropLookalikes(req, rt.ownedHeaders);
      // 7. A preflight is routed by the method it asks about, so that a route limited to that method answers it.
      const preflight = isPreflight(method, headers);
      const plain = withoutParameters(path);
      // The query as it is forwarded: what follows a `#` reaches no backend.
      const query = request.querystring;
      const overrides = overriddenMethods(headers, query);
      const scheme = ctx.protocol;
      // Answered by the CORS policy, a preflight reaches no backend to act on an override.
      let route = table.matchAlike(
        path,
        plain,
        preflight ? requestedMethod(ctx) : method,
        headers,
        host,
        preflight ? undefined : overrides,
        query,
        scheme,
      );
      let cors = route === undefined ? rt.cors : route.target.cors;
      if (preflight) {
        if (cors !== undefined) {
          await answerPreflight(ctx, cors, route, path);
          return errors.fillEmpty(ctx);
        }
        // No policy for it: an OPTIONS request like any other.
        route = table.matchAlike(path, plain, method, headers, host, overrides, query, scheme);
        cors = route === undefined ? rt.cors : route.target.cors;
      }
      if (route === undefined) {
        if (cors === undefined) throw HttpError.of('NOT_FOUND');
        // The gateway-wide policy makes the 404 readable cross-origin.
        await cors(ctx, notFound);
        return errors.fillEmpty(ctx);
      }
      routedBy = route;
      if (trace !== null) trace.routed(route.mapping.prefix, route.mapping.name);
      // 8.
      refuseUnsafeEscapes(route, path);
      // 9.
      const tooLarge = declaredTooLarge(req, bodyLimit);
      // A gRPC call's messages stream through under flow control, never held whole: a stream may outgrow any limit.
      const guard =
        !tooLarge && hasUnsizedBody(req) && !isGrpcTarget(route.target) ? guardStreamedBody(req, bodyLimit) : null;

      const state = ctx.state;
      state.mapping = route.mapping;
      state[ORIGINAL_PATH] = ctx.originalUrl === req.url ? path : basePath(ctx) + path;
      if (path !== seen) setPath(ctx, path);
      rt.active++;
      try {
        // 10. After the guard: a body read for its override is held to the body limit as any other.
        if (!tooLarge && !preflight && bodyMayOverride(method, headers))
          await refuseBodyOverride(req, table, { path, plain, method, headers, host, query, scheme }, bodyLimit);
        if (cors === undefined) await routed(ctx, rt, route, path, guard, tooLarge, trace);
        else await cors(ctx, () => routed(ctx, rt, route, path, guard, tooLarge, trace));
      } finally {
        if (--rt.active === 0 && rt.retired) released(rt);
        if (path !== seen) setPath(ctx, seen);
      }
      errors.fillEmpty(ctx);
    } catch (err) {
      if (trace !== null) trace.refused(err);
      errors.answer(ctx, err);
    } finally {
      if (known !== null) overrideErrorBody(ctx, known, routedBy);
      const web = grpcWebOf(ctx);
      if (web !== null || isGrpcRequest(ctx.req.headers)) {
        const resourceExhausted = known?.config.rateLimitService?.grpc?.use_resource_exhausted_code === true;
        if (answerAsGrpc(ctx, { resourceExhausted, web })) await readArrivedCall(ctx.req);
      }
    }
  };
}
