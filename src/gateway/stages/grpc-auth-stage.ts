/**
 * @module gateway/stages/grpc-auth-stage
 * The gateway's side of an AuthService with `proto: grpc`: every routed
 * request is checked with Envoy's ext_authz `Check` (v3), filled as Envoy
 * fills it, and the answer is honoured as Envoy honours it: an OK's header
 * and query edits reach the upstream, its response headers the client; a
 * refusal's status, headers and body reach the client, and the upstream is
 * never called. Host, the pseudo-headers and the framing of the request
 * stay the gateway's, whatever the answer says.
 */
import type { Context } from 'koa';
import type { IncomingHttpHeaders } from 'node:http';
import {
  createExtAuthzClient,
  USER_HEADER,
  type ExtAuthzAllowed,
  type ExtAuthzAnswer,
  type ExtAuthzCheck,
  type ExtAuthzDenied,
} from '../../auth';
import {
  FRAMING_HEADERS,
  hasRequestBody,
  headerName,
  HttpError,
  ORIGINAL_PATH,
  redactAddress,
  requestHost,
  unmappedAddress,
} from '../../http';
import type { AuthServiceRecord, MappingRecord } from '../config/schema';
import { NO_EVENTS } from '../events';
import { removeRequestHeader, scrubRaw } from '../request/headers/claimed-user';
import { clientAddress } from '../request/headers/forwarded';
import { markEdited } from '../reroute';
import { keepAnswerHeaders } from './answer-headers';
import { peekBody } from './auth-body';
import { breakersOpen, checkGate } from './auth-breaker';
import type { AuthStageOptions, Stage } from './stage';
import { unavailableAnswer } from './auth-unavailable';
import { closeAuthSpan, openAuthSpan } from './auth-span';
import { grpcChannelTls } from './grpc-tls';
import { traceOf, type HeaderCarrier } from '../../tracing';

/** Request headers an answer may neither set nor remove: the request's framing and connection, and Host. */
const PROTECTED = new Set([...FRAMING_HEADERS, 'host', 'expect']);
/** Envoy's word on whether the body sent is cut short; a client's own is never sent. */
const PARTIAL_BODY = 'x-envoy-auth-partial-body';
/** Emissary's `allow_request_body: true`. */
const ALLOW_REQUEST_BODY = { max_bytes: 4096, allow_partial: true };

/** Whether an answer may touch a request header: never a pseudo-header (`:authority`...), Host or the framing. */
function mayEdit(name: string): boolean {
  return name !== '' && name.charCodeAt(0) !== 58 && !PROTECTED.has(name);
}

function joined(value: string | string[]): string {
  return typeof value === 'string' ? value : value.join(',');
}

/** The request's headers as the check carries them: lower case, repeated ones joined, the pseudo-headers first. */
function checkedHeaders(ctx: Context, host: string, path: string, id: string): Record<string, string> {
  const headers = ctx.req.headers;
  const out: Record<string, string> = {
    ':authority': host,
    ':method': ctx.method,
    ':path': path,
    ':scheme': ctx.protocol,
  };
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && name !== USER_HEADER && name !== PARTIAL_BODY) out[name] = joined(value);
  }
  // What Envoy's connection manager has added before its filters run.
  const peer = clientAddress(ctx);
  const forwarded = headers['x-forwarded-for'];
  out['x-forwarded-for'] = forwarded === undefined ? peer : `${joined(forwarded)},${peer}`;
  out['x-forwarded-proto'] = ctx.protocol;
  if (id !== '' && out['x-request-id'] === undefined) out['x-request-id'] = id;
  return out;
}

/** The body's size as Envoy tells it: the bytes sent, else the declared length, else -1 (unknown). */
function bodySize(headers: IncomingHttpHeaders, hasBody: boolean): number {
  if (!hasBody) return 0;
  const declared = Number(headers['content-length']);
  return Number.isInteger(declared) && declared >= 0 ? declared : -1;
}

/** Builds the stage of an AuthService with `proto: grpc`. */
export function createGrpcAuthStage(record: AuthServiceRecord, options: AuthStageOptions = NO_EVENTS): Stage {
  const events = options;
  const tls = record.tls === true || (typeof record.tls === 'string' && record.tls !== '');
  const channel = grpcChannelTls(options.upstreamTls);
  let client: ReturnType<typeof createExtAuthzClient>;
  try {
    client = createExtAuthzClient(record.auth_service, {
      timeoutMs: record.timeout_ms,
      tls,
      credentials: options.credentials ?? channel?.credentials,
      servername: channel?.servername,
    });
  } catch (err) {
    throw new Error(`auth_service ${(err as Error).message}`);
  }
  const shownService = redactAddress(record.auth_service);
  const includeBody = record.include_body ?? (record.allow_request_body ? ALLOW_REQUEST_BODY : null);
  const added = Object.entries(record.add_auth_headers);
  const gate = checkGate(record);

  const unavailable = unavailableAnswer(record, options);

  /** The refusal, as the client's answer: the service's body, or the gateway's error body when it gives none. */
  function refuse(ctx: Context, denied: ExtAuthzDenied): false {
    events.authDecision?.('denied');
    const headers: Record<string, string | string[]> = {};
    for (const { name, value, append } of denied.headers) {
      if (!mayEdit(name)) continue;
      const prior = headers[name];
      headers[name] = append && prior !== undefined ? [...(Array.isArray(prior) ? prior : [prior]), value] : value;
    }
    if (denied.body === '' && denied.status >= 400) {
      const flat: Record<string, string> = {};
      for (const name in headers) flat[name] = joined(headers[name]);
      throw new HttpError(denied.status, undefined, { headers: flat });
    }
    ctx.status = denied.status;
    const res = ctx.res;
    for (const name in headers) res.setHeader(headerName(name), headers[name]);
    ctx.body = Buffer.from(denied.body);
    if (headers['content-type'] === undefined) {
      if (denied.body === '') ctx.remove('Content-Type');
      else ctx.type = 'text/plain; charset=utf-8';
    }
    return false;
  }

  /** The OK's edits: headers onto the routed request, query parameters, headers kept for the response. */
  function allow(ctx: Context, ok: ExtAuthzAllowed): true {
    const req = ctx.req;
    const headers = req.headers;
    for (const { name, value, append } of ok.headers) {
      if (!mayEdit(name)) continue;
      const prior = headers[name];
      if (prior !== undefined) scrubRaw(req.rawHeaders, name);
      headers[name] = append && prior !== undefined ? `${joined(prior)},${value}` : value;
    }
    for (const name of ok.headersToRemove) if (mayEdit(name)) removeRequestHeader(req, name);
    if (ok.queryToSet.length > 0 || ok.queryToRemove.length > 0) {
      const query = new URLSearchParams(ctx.querystring);
      for (const name of ok.queryToRemove) query.delete(name);
      for (const [name, value] of ok.queryToSet) query.set(name, value);
      ctx.querystring = query.toString();
    }
    if (
      ok.headers.length > 0 ||
      ok.headersToRemove.length > 0 ||
      ok.queryToSet.length > 0 ||
      ok.queryToRemove.length > 0
    ) {
      markEdited(ctx);
    }
    keepAnswerHeaders(ctx, ok.responseHeaders);
    events.authDecision?.('allowed');
    return true;
  }

  function conclude(ctx: Context, answer: ExtAuthzAnswer): boolean {
    return answer.allowed ? allow(ctx, answer) : refuse(ctx, answer);
  }

  function ask(ctx: Context, check: ExtAuthzCheck): Promise<boolean> {
    const trace = traceOf(ctx.state);
    const span = trace === undefined ? null : openAuthSpan(trace, shownService);
    const answered = (answer: ExtAuthzAnswer) => {
      gate?.leave();
      closeAuthSpan(span, answer.allowed ? 'allowed' : 'denied', answer.allowed ? 200 : answer.status);
      return conclude(ctx, answer);
    };
    const failed = (err: unknown) => {
      gate?.leave();
      closeAuthSpan(span, 'error', undefined);
      return unavailable(ctx, err);
    };
    if (gate !== null && !gate.enter()) {
      closeAuthSpan(span, 'error', undefined);
      return Promise.resolve().then(() => unavailable(ctx, breakersOpen()));
    }
    // The service is sent the check's span as its parent, in the call's metadata.
    let metadata: HeaderCarrier | undefined;
    if (span !== null) span.inject((metadata = {}));
    return client.check(check, metadata).then(answered, failed);
  }

  async function run(ctx: Context, mapping: MappingRecord): Promise<boolean> {
    if (mapping.bypass_auth) {
      events.authDecision?.('bypassed');
      return true;
    }
    const req = ctx.req;
    const recorded: unknown = ctx.state[ORIGINAL_PATH];
    const routedPath = typeof recorded === 'string' ? recorded : ctx.path;
    const query = ctx.querystring;
    const path = query === '' ? routedPath : `${routedPath}?${query}`;
    const host = requestHost(ctx);
    const id = typeof ctx.state.requestId === 'string' ? ctx.state.requestId : '';
    const headers = checkedHeaders(ctx, host, path, id);
    for (let i = 0; i < added.length; i++) headers[added[i][0]] = added[i][1];
    const hasBody = hasRequestBody(req);
    let body: string | undefined;
    let size = bodySize(req.headers, hasBody);
    if (includeBody !== null && hasBody) {
      const tooLong = () => HttpError.of('AUTH_BODY_TOO_LONG', { maxBytes: includeBody.max_bytes });
      if (!includeBody.allow_partial && Number(req.headers['content-length']) > includeBody.max_bytes) throw tooLong();
      const { bytes, cut } = await peekBody(req, includeBody.max_bytes);
      if (cut && !includeBody.allow_partial) throw tooLong();
      body = bytes.toString('utf8');
      if (size < 0 && !cut) size = bytes.length;
      headers[PARTIAL_BODY] = cut ? 'true' : 'false';
    }
    const socket = req.socket;
    return ask(ctx, {
      source: { address: clientAddress(ctx), port: socket.remotePort ?? 0 },
      destination: { address: unmappedAddress(socket.localAddress ?? ''), port: socket.localPort ?? 0 },
      id,
      method: ctx.method,
      headers,
      path,
      host,
      scheme: ctx.protocol,
      size,
      protocol: req.httpVersionMajor === 2 ? 'HTTP/2' : `HTTP/${req.httpVersion}`,
      body,
      contextExtensions: mapping.auth_context_extensions,
    });
  }

  return {
    run,
    async close() {
      client.close();
    },
  };
}
