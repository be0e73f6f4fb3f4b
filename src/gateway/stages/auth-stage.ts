/**
 * @module gateway/stages/auth-stage
 * The gateway's side of an AuthService record: every routed request is asked
 * about, in-process when the record names a built-in module, over HTTP
 * otherwise, or over gRPC with `proto: grpc` (./grpc-auth-stage); the user the answer names travels on to the backend, and nothing
 * a client sends can pose as it.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';
import { repeatedAuthorization, USER_HEADER, type AuthDecision, type AuthRequest } from '../../auth';
import { hasRequestBody, HttpError, ORIGINAL_PATH, redactAddress, requestHost } from '../../http';
import { peekBody } from './auth-body';
import { breakersOpen, checkGate } from './auth-breaker';
import { removeRequestHeader, scrubRaw } from '../request/headers/claimed-user';
import type { AuthServiceRecord, MappingRecord } from '../config/schema';
import { NO_EVENTS } from '../events';
import { clientAddress, forwardedHeader } from '../request/headers/forwarded';
import { markEdited } from '../reroute';
import type { ModuleRegistry } from '../module';
import type { AuthStageOptions, Stage } from './stage';
import { unavailableAnswer } from './auth-unavailable';
import { refusalWriter } from './auth-refusal';
import { authServiceClient } from './auth-service-client';
import { createGrpcAuthStage } from './grpc-auth-stage';
import { closeAuthSpan, openAuthSpan } from './auth-span';
import { traceOf, type ChildSpan } from '../../tracing';
import {
  ALSO_RETURNED,
  ALWAYS_COPIED,
  ALWAYS_SENT,
  BODY_HEADERS,
  FORWARDED,
  NEVER_COPIED,
  single,
  unique,
} from './auth-headers';

export type { AuthStageOptions } from './stage';

type BodyLimits = NonNullable<AuthServiceRecord['include_body']>;
/** What Emissary's `allow_request_body: true` stands for. */
const ALLOW_REQUEST_BODY: BodyLimits = { max_bytes: 4096, allow_partial: true };
/**
 * Envoy's word on whether the body it sent is cut short, which an auth service
 * reads to refuse what it cannot see whole. Only the gateway says it: a
 * client's own copy is never sent, as Envoy skips it too.
 */
const PARTIAL_BODY = 'x-envoy-auth-partial-body';

/**
 * Builds the auth stage of `record`. Throws when `auth_service` names neither
 * a registered module with `authenticate` nor an address; the message speaks
 * of the field, and whoever reports it names the record.
 */
export function createAuthStage(
  record: AuthServiceRecord,
  modules: ModuleRegistry,
  options: AuthStageOptions = NO_EVENTS,
): Stage {
  if (record.proto === 'grpc') return createGrpcAuthStage(record, options);
  const events = options;
  const { authenticator, remote } = authServiceClient(record, modules, options);

  const shownService = redactAddress(record.auth_service);
  // A built-in module is called, not reached through a cluster: no breakers bound it.
  const gate = remote === undefined ? null : checkGate(record);
  const userHeaders = unique(record.allowed_authorization_headers).filter((n) => !NEVER_COPIED.has(n));
  const copied = unique([...ALWAYS_COPIED, ...userHeaders]).filter((n) => !BODY_HEADERS.includes(n));
  // A client's own copy of a header the auth service vouches for never reaches
  // the backend, nor, whatever the record copies, the user header of this
  // system itself. Those Emissary always copies stay: the client's
  // Authorization goes on when the auth service sets none.
  const stripped = unique([...userHeaders, USER_HEADER]).filter(
    (n) => !ALWAYS_COPIED.includes(n) && !BODY_HEADERS.includes(n),
  );
  // Sent before they are stripped (the auth service may read what it vouches
  // for), except the user header: no client claim reaches the auth service.
  const sent = unique([...ALWAYS_SENT, ...record.allowed_request_headers]).filter(
    (n) => !FORWARDED.has(n) && n !== USER_HEADER && n !== PARTIAL_BODY && n !== 'forwarded',
  );
  // Named, it is the gateway's own, as a remote upstream gets it: never the client's alone.
  const tellsForwarded = record.allowed_request_headers.includes('forwarded');
  const returned = unique([...ALWAYS_COPIED, ...ALSO_RETURNED, ...userHeaders]);
  const added = Object.entries(record.add_auth_headers);
  // Joined as a plain prefix, as Envoy does, but without doubling the slash of a prefix that ends with one.
  const prefix = record.path_prefix.endsWith('/') ? record.path_prefix.replace(/\/+$/, '') : record.path_prefix;
  const includeBody: BodyLimits | null = record.include_body ?? (record.allow_request_body ? ALLOW_REQUEST_BODY : null);
  // As Envoy's HTTP ext_authz: sent with a body, when allowed_request_headers names it.
  const tellsPartial = record.allowed_request_headers.includes(PARTIAL_BODY);
  // An in-process authenticator that reads only some headers is asked with
  // those alone (still only among those it may see): no X-Forwarded-* to build.
  const reads = remote ? undefined : authenticator.requestHeaders;
  const readOnly = reads ? sent.filter((n) => reads.includes(n)) : undefined;

  /** What the auth service is told: the original method, path and query, and the chosen headers. */
  function askedHeaders(ctx: Context, headers: IncomingHttpHeaders): IncomingHttpHeaders {
    const out: IncomingHttpHeaders = {};
    // Node keeps the first of two Authorization headers; the auth service is to see both, and refuse.
    const repeated = headers.authorization === undefined ? undefined : repeatedAuthorization(ctx.req.rawHeaders);
    if (readOnly) {
      for (let i = 0; i < readOnly.length; i++) {
        const value = headers[readOnly[i]];
        if (value !== undefined) out[readOnly[i]] = value;
      }
      if (repeated !== undefined) out.authorization = repeated as unknown as string;
      return addHeaders(out);
    }
    for (const name of sent) {
      const value = headers[name];
      if (value !== undefined) out[name] = value;
    }
    const peer = clientAddress(ctx);
    const forwardedFor = headers['x-forwarded-for'];
    out['x-forwarded-for'] = forwardedFor ? `${single(forwardedFor)}, ${peer}` : peer;
    const host = requestHost(ctx);
    out['x-forwarded-proto'] = ctx.protocol;
    out['x-forwarded-host'] = host;
    if (tellsForwarded) out.forwarded = forwardedHeader(ctx, peer, host, ctx.protocol);
    if (repeated !== undefined) out.authorization = repeated as unknown as string;
    return addHeaders(out);
  }

  /** `add_auth_headers`, over the client's of the same name. */
  function addHeaders(out: IncomingHttpHeaders): IncomingHttpHeaders {
    for (let i = 0; i < added.length; i++) out[added[i][0]] = added[i][1];
    return out;
  }

  const answerUnavailable = unavailableAnswer(record, options);
  const refuse = refusalWriter({ returned, inProcess: remote === undefined, events });
  function unavailable(ctx: Context, cause: unknown, span: ChildSpan | null, status?: number): boolean {
    if (span !== null) closeAuthSpan(span, 'error', status);
    return answerUnavailable(ctx, cause);
  }

  /** Acts on the auth service's decision: its headers onto the routed request on 200, its answer otherwise. */
  function conclude(
    ctx: Context,
    headers: IncomingHttpHeaders,
    decision: AuthDecision,
    span: ChildSpan | null,
    immediate: boolean,
  ): boolean {
    if (decision.status >= 500)
      return unavailable(ctx, new Error(`the auth service answered ${decision.status}`), span, decision.status);
    if (decision.status !== 200) return refuse(ctx, decision, span, immediate);
    for (let i = 0; i < copied.length; i++) {
      const name = copied[i];
      const value = decision.headers[name];
      if (value === undefined) continue;
      // Replaced, not added to: a module reading the raw headers must not find the client's too.
      if (headers[name] !== undefined) scrubRaw(ctx.req.rawHeaders, name);
      headers[name] = single(value);
      markEdited(ctx);
    }
    events.authDecision?.('allowed');
    if (span !== null) closeAuthSpan(span, 'allowed', decision.status, remote ? undefined : immediate);
    return true;
  }

  /** Drops what a client may not say itself (who the user is) from the request it routes. */
  function strip(ctx: Context): void {
    const headers = ctx.req.headers;
    for (let i = 0; i < stripped.length; i++) {
      const name = stripped[i];
      if (headers[name] === undefined) continue;
      removeRequestHeader(ctx.req, name);
      // A route chosen by the client's own copy is chosen again without it.
      markEdited(ctx);
    }
  }

  function ask(
    ctx: Context,
    headers: IncomingHttpHeaders,
    request: AuthRequest,
    span: ChildSpan | null,
  ): boolean | Promise<boolean> {
    if (gate !== null && !gate.enter()) return unavailable(ctx, breakersOpen(), span);
    // The remote service is sent the check's span as its parent.
    if (span !== null && remote !== undefined) span.inject(request.headers);
    let known: AuthDecision | undefined;
    let pending: Promise<AuthDecision> | undefined;
    try {
      // A decision known at once (a cached credential) needs no promise.
      known = authenticator.authenticateNow?.(request);
      if (known === undefined) pending = authenticator.authenticate(request);
    } catch (err) {
      gate?.leave();
      return unavailable(ctx, err, span);
    }
    // Outside the try: a refusal is thrown as the client's error, not taken for a failing service.
    if (known !== undefined) {
      gate?.leave();
      return conclude(ctx, headers, known, span, true);
    }
    return pending!.then(
      (decision) => {
        gate?.leave();
        return conclude(ctx, headers, decision, span, false);
      },
      (err: unknown) => {
        gate?.leave();
        return unavailable(ctx, err, span);
      },
    );
  }

  /**
   * Asks with the body, as `include_body` says: its first `max_bytes`, or a
   * 413 for a longer one unless `allow_partial` (as Envoy, whatever
   * `failure_mode_allow` says). The backend still gets the whole body.
   */
  async function askWithBody(
    ctx: Context,
    headers: IncomingHttpHeaders,
    request: AuthRequest,
    limits: BodyLimits,
    span: ChildSpan | null,
  ): Promise<boolean> {
    const tooLong = () => {
      // Refused before the auth service is asked: the check's span ends with the refusal.
      if (span !== null) closeAuthSpan(span, 'denied', 413);
      return HttpError.of('AUTH_BODY_TOO_LONG', { maxBytes: limits.max_bytes });
    };
    if (!limits.allow_partial && Number(headers['content-length']) > limits.max_bytes) throw tooLong();
    const { bytes, cut } = await peekBody(ctx.req, limits.max_bytes);
    if (cut && !limits.allow_partial) throw tooLong();
    request.body = bytes;
    if (tellsPartial) request.headers[PARTIAL_BODY] = cut ? 'true' : 'false';
    return ask(ctx, headers, request, span);
  }

  function run(ctx: Context, mapping: MappingRecord): boolean | Promise<boolean> {
    const headers = ctx.req.headers;
    if (mapping.bypass_auth) {
      // Even unasked, a client never gets to say who the user is.
      strip(ctx);
      events.authDecision?.('bypassed');
      return true;
    }

    const recorded: unknown = ctx.state[ORIGINAL_PATH];
    const path = typeof recorded === 'string' ? recorded : ctx.path;
    const query = ctx.querystring;
    const request: AuthRequest = {
      method: ctx.method,
      url: query ? `${prefix}${path}?${query}` : prefix + path,
      headers: askedHeaders(ctx, headers),
      connection: ctx.req.socket,
    };
    strip(ctx);
    const trace = traceOf(ctx.state);
    const span = trace === undefined ? null : openAuthSpan(trace, remote === undefined ? undefined : shownService);
    if (includeBody !== null && hasRequestBody(ctx.req)) return askWithBody(ctx, headers, request, includeBody, span);
    return ask(ctx, headers, request, span);
  }

  return {
    run,
    async close() {
      await remote?.close();
    },
  };
}
