/**
 * @module gateway/routed
 * What runs once a request is routed (inside its CORS policy, if any): the
 * auth and rate-limit stages, the route's header edits, then the redirect or
 * the forward, to an in-process module or a remote upstream; the gateway's
 * own answer for the route when that fails.
 */
import type { Context } from 'koa';
import { bodyFailure, hasUnsizedBody, setPath, type ErrorResponder } from '../http';
import type { GatewayEvents } from './events';
import { answerRedirect } from './match/redirect';
import { guardStreamedBody, payloadTooLarge, type StreamedBodyGuard } from './request/body-limit';
import { applyRequestEdits, applyResponseEdits } from './request/headers/header-edits';
import { keptHeaders, restoreHeaders } from './request/headers/kept-headers';
import { rewritePath, type Route } from './match/route-table';
import { isGrpcTarget, type RouteTarget, type Runtime, type UpstreamOptions } from './types';
import { forwardRemote } from './upstream';
import { forwardGrpc } from './upstream/grpc';
import { forwardUpgrade, tunnelledUpgrade } from './upstream/upgrade';
import { applyAnswerHeaders } from './stages/answer-headers';
import { reroute } from './reroute';
import type { RequestTrace } from '../tracing';

/** What the routed part of every request shares. */
export interface RoutedOptions {
  /** Largest request body, in bytes. */
  readonly bodyLimit: number;
  readonly errors: ErrorResponder;
  readonly events: GatewayEvents;
  readonly upstreams: UpstreamOptions;
}

/**
 * Runs a routed request: `path` is the normalised path the route matched,
 * `guard` holds a body without a declared length to the limit, `tooLarge`
 * says a declared one is over it, `trace` is the request's trace (null
 * when it is not traced).
 */
export type RunRouted = (
  ctx: Context,
  rt: Runtime,
  route: Route<RouteTarget>,
  path: string,
  guard: StreamedBodyGuard | null,
  tooLarge: boolean,
  trace: RequestTrace | null,
) => Promise<void>;

/** The path under which a remote upstream is asked: its base, the rewritten path, the query. */
function upstreamPath(base: string, path: string, query: string): string {
  const full = base === '' ? path : base + path;
  return query === '' ? full : `${full}?${query}`;
}

/** Builds the routed part of the gateway's middleware. */
export function createRouted({ bodyLimit, errors, events, upstreams }: RoutedOptions): RunRouted {
  return async function runRouted(ctx, rt, matched, path, streamGuard, tooLarge, trace) {
    let guard = streamGuard;
    let route = matched;
    // The auth stage sees bypass_auth routes too: it strips identity headers a
    // client sent on every route. A stage that decides at once answers a
    // boolean, and no promise is awaited for it. A body declared too large is
    // refused before either is asked.
    if (rt.auth !== null && !tooLarge) {
      const passed = rt.auth.run(ctx, route.mapping);
      if (!(typeof passed === 'boolean' ? passed : await passed)) return;
      // What the auth service set may choose another route, as Envoy's cleared route cache.
      route = reroute(ctx, rt, route, path);
      if (route !== matched) {
        if (trace !== null) trace.routed(route.mapping.prefix, route.mapping.name);
        // A gRPC route's stream was not held to the body limit; the route the check chose instead may need it.
        if (guard === null && !tooLarge && hasUnsizedBody(ctx.req) && !isGrpcTarget(route.target))
          guard = guardStreamedBody(ctx.req, bodyLimit);
      }
    }
    const mapping = route.mapping;
    const target = route.target;
    if (rt.rateLimit !== null && !tooLarge) {
      const passed = rt.rateLimit.run(
        ctx,
        mapping,
        target.kind === 'remote' ? target.upstream.cluster.name : undefined,
      );
      if (!(typeof passed === 'boolean' ? passed : await passed)) return;
    }
    // Headers the gateway set before a module runs, which the module's own error handler clears.
    let kept = target.kind === 'in-process' ? keptHeaders(ctx.res) : null;
    try {
      if (tooLarge) throw payloadTooLarge(bodyLimit);
      applyRequestEdits(ctx.req, target);
      const forwardPath = rewritePath(route, path);
      if (target.kind === 'redirect') {
        answerRedirect(ctx, target.redirect, route, path);
      } else if (target.kind === 'in-process') {
        // The module runs on this context with the rewritten path, as koa-mount
        // runs a mounted app; the gateway's path is back afterwards, whatever happened.
        const seen = ctx.request.path;
        if (forwardPath !== seen) setPath(ctx, forwardPath);
        // The module gets the gateway's span as its parent, as a remote upstream would; it reads the trace from ctx.state too.
        if (trace !== null) trace.inject(ctx.req.headers);
        try {
          await target.handler(ctx);
        } finally {
          setPath(ctx, seen);
        }
        // A body that failed under the module (too long, malformed) is answered for it.
        const failed = bodyFailure(ctx.req);
        if (failed !== undefined) throw failed;
      } else {
        const forward = {
          path: upstreamPath(target.upstream.address.basePath, forwardPath, ctx.request.querystring),
          timeoutMs: target.timeoutMs,
          guard,
          route: mapping.name,
          events,
          removedHeaders: target.removeRequestHeaders,
          hostRewrite: target.hostRewrite,
          retryBufferBytes: upstreams.retryBufferBytes,
          trace,
        };
        const upgrade = target.upgrades === null ? undefined : tunnelledUpgrade(ctx, target.upgrades);
        if (target.grpc) await forwardGrpc(ctx, target.upstream, forward);
        else if (upgrade === undefined) await forwardRemote(ctx, target.upstream, forward);
        else
          await forwardUpgrade(ctx, target.upstream, upgrade, {
            ...forward,
            beforeSwitch: () => applyResponseEdits(ctx.res, target),
          });
      }
    } catch (err) {
      // The gateway's own answer for the route (413, 502, 503, 504) is answered
      // here, so that it gets the route's response edits, as Envoy's router
      // gives them to its local replies, and keeps its CORS and rate-limit headers.
      if (kept === null) kept = keptHeaders(ctx.res);
      if (trace !== null) trace.refused(err);
      errors.answer(ctx, err);
    }
    if (kept !== null) restoreHeaders(ctx, kept);
    // What the auth and rate-limit services asked to add to the answer, then the route's own edits, as Envoy orders its filters.
    applyAnswerHeaders(ctx);
    applyResponseEdits(ctx.res, target);
  };
}
