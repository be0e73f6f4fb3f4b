/**
 * @module gateway/upstream/traced-try
 * Each try of a forward as a CLIENT span of the request's trace, so that
 * retries show: the endpoint it went to, its ordinal (`http.request.resend_count`),
 * the status it got or why it got none. The upstream is sent this span as
 * its parent. Only a traced request opens one.
 */
import type { ChildSpan, RequestTrace } from '../../tracing';
import { AnswerBodyError } from './call';
import type { Endpoint } from './endpoints/endpoint';
import type { RouteUpstream } from './endpoints/clusters';
import type { ExchangeTimers } from './exchange-timers';
import { failureOf } from './failures';

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** The path with every query value redacted: a query may carry a token. */
function redactedPath(path: string): string {
  const q = path.indexOf('?');
  if (q === -1) return path;
  return `${path.slice(0, q)}?${path
    .slice(q + 1)
    .split('&')
    .map((part) => (part.includes('=') ? `${part.slice(0, part.indexOf('='))}=REDACTED` : part))
    .join('&')}`;
}

/**
 * Opens the span of try number `tries` (0 for the first) to `endpoint`, and
 * writes it as the parent into `headers`, which the try sends.
 */
export function openTry(
  trace: RequestTrace,
  method: string,
  upstream: RouteUpstream,
  endpoint: Endpoint,
  path: string,
  tries: number,
  headers: Record<string, string | string[]>,
): ChildSpan {
  const known = KNOWN_METHODS.has(method);
  const span = trace.child(known ? method : 'HTTP', 'client');
  if (span.recording) {
    const address = upstream.address;
    span.set('http.request.method', known ? method : '_OTHER');
    span.set('server.address', address.hostname);
    span.set('server.port', address.port);
    span.set('network.peer.address', endpoint.address);
    span.set('network.peer.port', endpoint.port);
    span.set('url.full', `${address.secure ? 'https' : 'http'}://${address.host}${redactedPath(path)}`);
    span.set('gatehouse.cluster', upstream.cluster.name);
    if (tries > 0) span.set('http.request.resend_count', tries);
  }
  span.inject(headers);
  return span;
}

/** The try got an answer: its status; a 4xx or 5xx marks the span failed, as the conventions ask of a client span. */
export function answeredTry(span: ChildSpan, status: number): void {
  span.set('http.response.status_code', status);
  if (status >= 400) span.fail(String(status));
}

/** The try got no answer, failing with `err`: why (`body`, `timeout`, `per-try-timeout`, `idle`, `refused`...). */
export function failedTry(span: ChildSpan, err: unknown, timers: ExchangeTimers): void {
  const why =
    err instanceof AnswerBodyError ? 'body' : timers.timedOut ? 'timeout' : (timers.tryTimedOut ?? failureOf(err));
  span.fail(why === 'per-try' ? 'per-try-timeout' : why);
  span.end();
}
