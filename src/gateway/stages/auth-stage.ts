/**
 * @module gateway/stages/auth-stage
 * The gateway's side of an AuthService record: every routed request is asked
 * about, in-process when the record names a built-in module and over HTTP
 * otherwise; the user the answer names travels on to the backend, and nothing
 * a client sends can pose as it.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';
import pino from 'pino';
import {
  createRemoteAuthClient,
  repeatedAuthorization,
  USER_HEADER,
  type AuthDecision,
  type Authenticator,
  type AuthRequest,
  type RemoteAuthClient,
} from '../../auth';
import { hasRequestBody, headerName, HttpError, ORIGINAL_PATH, redactAddress, requestHost } from '../../http';
import { connectOptions, type UpstreamTls } from '../../tls';
import { peekBody } from './auth-body';
import { removeRequestHeader, scrubRaw } from '../request/headers/claimed-user';
import type { AuthServiceRecord, MappingRecord } from '../config/schema';
import { NO_EVENTS, type GatewayEvents } from '../events';
import { clientAddress, forwardedHeader } from '../request/headers/forwarded';
import { pacedFailureLog, type StageLogger } from '../failure-log';
import type { ModuleRegistry } from '../module';
import type { Stage } from './stage';

/** The stage's options; a {@link GatewayEvents} fits as it is (the gateway passes its events here). */
export interface AuthStageOptions extends GatewayEvents {
  /** Where a failing auth service is reported (once per burst of failures). */
  logger?: StageLogger;
  /** Clock in ms, for the failure log's pacing. */
  now?: () => number;
  /** TLS to a remote auth service, as the TLSContext its `tls` names says. */
  upstreamTls?: UpstreamTls;
}

/**
 * Request headers the auth service always sees, besides
 * `allowed_request_headers` and `X-Forwarded-*`: Emissary's list, `Host` (as
 * Envoy sends it), and `Accept`, so that a refusal can be written in a type
 * the client reads.
 */
const ALWAYS_SENT = ['accept', 'authorization', 'cookie', 'from', 'host', 'proxy-authorization', 'user-agent'];
const FORWARDED = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);
/**
 * Headers of the auth service's answer that always go on, besides
 * `allowed_authorization_headers`, as Emissary has them: onto the routed
 * request after a 200 (over the client's own), to the client otherwise.
 */
const ALWAYS_COPIED = ['authorization', 'location', 'proxy-authenticate', 'set-cookie', 'www-authenticate'];
/** Headers of a refusal that reach the client besides those. */
const ALSO_RETURNED = ['retry-after', 'content-type', 'vary'];
/** Framing, connection and Host are the gateway's, whatever the record names: a 200's would cut the client's body short. */
const NEVER_COPIED = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'host',
]);
/** About the body they come with: a 200's stay off the routed request, which keeps the client's; a refusal's go with it. */
const BODY_HEADERS = ['content-type', 'content-encoding'];
type BodyLimits = NonNullable<AuthServiceRecord['include_body']>;
/** What Emissary's `allow_request_body: true` stands for. */
const ALLOW_REQUEST_BODY: BodyLimits = { max_bytes: 4096, allow_partial: true };
const EMPTY = Buffer.alloc(0);
/**
 * Envoy's word on whether the body it sent is cut short, which an auth service
 * reads to refuse what it cannot see whole. Only the gateway says it: a
 * client's own copy is never sent, as Envoy skips it too.
 */
const PARTIAL_BODY = 'x-envoy-auth-partial-body';

function unique(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => n.toLowerCase()))];
}

function single(value: string | string[]): string {
  return typeof value === 'string' ? value : value.join(', ');
}

/**
 * Sets a header of the auth service's answer on the response as it came:
 * Koa's ctx.set fails (a 500) on a repeated header it takes for single-valued.
 */
function setAnswerHeader(ctx: Context, name: string, value: string | string[] | undefined): void {
  if (value !== undefined && !ctx.res.headersSent) ctx.res.setHeader(headerName(name), value);
}

function looksLikeAddress(service: string): boolean {
  return service.includes(':') || service.includes('/');
}

/** The address to dial: `tls: true` or a TLSContext makes a bare `host:port` an https one. */
function dialled(record: AuthServiceRecord): string {
  const address = record.auth_service;
  const tls = record.tls === true || (typeof record.tls === 'string' && record.tls !== '');
  return tls && !/^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? `https://${address}` : address;
}

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
  const events = options;
  const logFailure = pacedFailureLog(options.logger ?? pino({ name: 'gateway' }), options.now);
  const builtIn = modules.get(record.auth_service);
  let authenticator: Authenticator;
  let remote: RemoteAuthClient | undefined;
  if (builtIn?.authenticate) {
    authenticator = builtIn as Authenticator;
  } else if (looksLikeAddress(record.auth_service)) {
    try {
      const tls = options.upstreamTls;
      remote = createRemoteAuthClient(dialled(record), {
        timeoutMs: record.timeout_ms,
        linkerdHeaders: record.add_linkerd_headers,
        ...(tls !== undefined ? { tls: connectOptions(tls), servername: tls.servername } : {}),
      });
    } catch (err) {
      throw new Error(`auth_service ${(err as Error).message}`);
    }
    authenticator = remote;
  } else {
    // The usual cause of a missing built-in: no users file for it to serve.
    const hint =
      record.auth_service === 'auth' && !builtIn
        ? '; the built-in auth service runs when the config folder has users.htpasswd'
        : '';
    throw new Error(
      `auth_service '${redactAddress(record.auth_service)}' is neither a built-in module that ` +
        `authenticates nor an address (host:port or URL)${hint}`,
    );
  }

  const shownService = redactAddress(record.auth_service);
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

  function unavailable(ctx: Context, cause: unknown): boolean {
    events.authDecision?.('error');
    logFailure(
      cause,
      { authService: shownService, failureModeAllow: record.failure_mode_allow },
      record.failure_mode_allow
        ? 'auth service unavailable; letting requests through'
        : 'auth service unavailable; refusing requests',
    );
    if (record.failure_mode_allow) return true;
    if (record.status_on_error < 400) {
      // Not an error status (a redirect, say): sent as it is, with no body.
      ctx.status = record.status_on_error;
      ctx.body = EMPTY;
      // Koa calls the empty body application/octet-stream; there is nothing to type.
      ctx.remove('Content-Type');
      return false;
    }
    throw HttpError.of('AUTH_SERVICE_UNAVAILABLE', { status: record.status_on_error, cause });
  }

  /** Writes the auth service's refusal as the client's response. */
  function refuse(ctx: Context, decision: AuthDecision): false {
    events.authDecision?.('denied');
    const body = decision.body;
    // No body to pass on, or an in-process service that says why: the
    // gateway's own error body, in the representation the client's Accept chose.
    if (
      decision.status >= 400 &&
      (body === undefined || body.length === 0 || (remote === undefined && decision.detail !== undefined))
    ) {
      const headers: Record<string, string> = {};
      let lists = false;
      for (const name of returned) {
        const value = decision.headers[name];
        if (value === undefined || BODY_HEADERS.includes(name)) continue;
        if (typeof value !== 'string' && value.length > 1) lists = true;
        headers[name] = single(value);
      }
      if (!lists) {
        if (remote === undefined && decision.error !== undefined) throw HttpError.of(decision.error, { headers });
        // The auth service's own status, relayed: with its detail when it is in this process.
        throw new HttpError(decision.status, remote === undefined ? decision.detail : undefined, { headers });
      }
      // Two Set-Cookie joined, as an error's headers are, are one broken cookie (RFC 6265 §3):
      // set as they came, and the gateway writes the error body of a status without one.
      ctx.status = decision.status;
      for (const name in headers) setAnswerHeader(ctx, name, decision.headers[name]);
      return false;
    }
    ctx.status = decision.status;
    for (const name of returned) {
      const value = decision.headers[name];
      if (value !== undefined) setAnswerHeader(ctx, name, value);
    }
    ctx.body = body === undefined ? EMPTY : typeof body === 'string' ? Buffer.from(body) : body;
    // Koa calls bytes `application/octet-stream`; an answer that named no type (a redirect) keeps none.
    if (decision.headers['content-type'] === undefined) ctx.remove('Content-Type');
    return false;
  }

  /** Acts on the auth service's decision: its headers onto the routed request on 200, its answer otherwise. */
  function conclude(ctx: Context, headers: IncomingHttpHeaders, decision: AuthDecision): boolean {
    if (decision.status >= 500) return unavailable(ctx, new Error(`the auth service answered ${decision.status}`));
    if (decision.status !== 200) return refuse(ctx, decision);
    for (let i = 0; i < copied.length; i++) {
      const name = copied[i];
      const value = decision.headers[name];
      if (value === undefined) continue;
      // Replaced, not added to: a module reading the raw headers must not find the client's too.
      if (headers[name] !== undefined) scrubRaw(ctx.req.rawHeaders, name);
      headers[name] = single(value);
    }
    events.authDecision?.('allowed');
    return true;
  }

  /** Drops what a client may not say itself (who the user is) from the request it routes. */
  function strip(ctx: Context): void {
    for (let i = 0; i < stripped.length; i++) removeRequestHeader(ctx.req, stripped[i]);
  }

  function ask(ctx: Context, headers: IncomingHttpHeaders, request: AuthRequest): boolean | Promise<boolean> {
    let known: AuthDecision | undefined;
    let pending: Promise<AuthDecision> | undefined;
    try {
      // A decision known at once (a cached credential) needs no promise.
      known = authenticator.authenticateNow?.(request);
      if (known === undefined) pending = authenticator.authenticate(request);
    } catch (err) {
      return unavailable(ctx, err);
    }
    // Outside the try: a refusal is thrown as the client's error, not taken for a failing service.
    if (known !== undefined) return conclude(ctx, headers, known);
    return pending!.then(
      (decision) => conclude(ctx, headers, decision),
      (err: unknown) => unavailable(ctx, err),
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
  ): Promise<boolean> {
    const tooLong = () => HttpError.of('AUTH_BODY_TOO_LONG', { maxBytes: limits.max_bytes });
    if (!limits.allow_partial && Number(headers['content-length']) > limits.max_bytes) throw tooLong();
    const { bytes, cut } = await peekBody(ctx.req, limits.max_bytes);
    if (cut && !limits.allow_partial) throw tooLong();
    request.body = bytes;
    if (tellsPartial) request.headers[PARTIAL_BODY] = cut ? 'true' : 'false';
    return ask(ctx, headers, request);
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
    if (includeBody !== null && hasRequestBody(ctx.req)) return askWithBody(ctx, headers, request, includeBody);
    return ask(ctx, headers, request);
  }

  return {
    run,
    async close() {
      await remote?.close();
    },
  };
}
