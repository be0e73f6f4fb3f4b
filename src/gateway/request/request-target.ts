/**
 * @module gateway/request/request-target
 * Absolute-form request targets (`GET http://example.com/v1/x HTTP/1.1`, as
 * clients configured to use a proxy send them). RFC 9112 §3.2.2: the Host
 * header is then ignored and the target's authority used instead. The gateway
 * rewrites such a request to origin form (`/v1/x`) with `Host` set from the
 * authority, as Envoy does, before anything reads it: routing, normalisation
 * and auth see one path, modules a path that starts with `/`, and absolute
 * links and `X-Forwarded-Host` name the authority the client asked for.
 *
 * The scheme must be http or https (either way, the connection says which
 * protocol the request came over); an authority with user information, or
 * one that is no `host[:port]`, is a 400. The Host checks are here too;
 * ../admit runs them in their place among the gateway's other refusals.
 */
import type { Context } from 'koa';
import { HttpError, repeatedHeader, requestHost } from '../../http';
import { isHostValue } from '../match/host-match';

const SLASH = 47;
const ABSOLUTE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/;
/** A reg-name or IP literal, then an optional port. */
const AUTHORITY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(?::([0-9]{0,5}))?$/;

/**
 * Rewrites an absolute-form request target to origin form, with `Host` taken
 * from its authority; leaves any other target alone. Throws a 400
 * {@link HttpError} for an absolute target it cannot use.
 */
export function toOriginForm(ctx: Context): void {
  const url = ctx.req.url ?? '';
  if (url.charCodeAt(0) === SLASH) return;
  const match = ABSOLUTE.exec(url);
  // `*` and anything else are left to path normalisation, which refuses them.
  if (match === null) return;
  const scheme = match[1].toLowerCase();
  if (scheme !== 'http' && scheme !== 'https') throw HttpError.of('TARGET_NOT_HTTP');
  const authority = match[2];
  if (authority.includes('@')) throw HttpError.of('TARGET_USER_INFO');
  const host = AUTHORITY.exec(authority);
  if (host === null || (host[1] !== undefined && Number(host[1]) > 65535)) {
    throw HttpError.of('TARGET_AUTHORITY_MALFORMED');
  }
  const start = match[0].length;
  const rest = url.slice(start);
  const originForm = rest.charCodeAt(0) === SLASH ? rest : `/${rest}`;
  // An empty port (`host:`) is the scheme's default (RFC 3986 §3.2.3).
  ctx.req.headers.host = host[1] === '' ? authority.slice(0, -1) : authority;
  // Koa kept the target as it came; links are built from it. Inside a host
  // app that mounted the gateway, it is the host app's: the same scheme and
  // authority go.
  const original = ctx.originalUrl;
  if (original.startsWith(match[0])) {
    const tail = original.slice(start);
    ctx.originalUrl = ctx.request.originalUrl = tail.charCodeAt(0) === SLASH ? tail : `/${tail}`;
  }
  ctx.url = originForm;
}

/**
 * RFC 9112 §3.2: a request with more than one Host line is a 400. Node keeps
 * the first and drops the others, so a proxy in front that read the last one
 * would have checked another host than the one routed here.
 */
export function refuseRepeatedHost(rawHeaders: readonly string[]): void {
  if (repeatedHeader(rawHeaders, 'host') !== undefined) throw HttpError.of('HOST_REPEATED');
}

/**
 * RFC 9112 §3.2: a Host that is not valid is a 400. Koa, WHATWG URLs and
 * upstreams read a host out of many things no Mapping's hostname matches
 * (`api.example.com:x`, `api.example.com,evil`, `u@api.example.com`,
 * `api%2Eexample.com`, `2130706433`): routed, such a request would reach a
 * Mapping for any host, while the backend took it for one that needs auth.
 * `error` says where the host was read.
 */
function refuseMalformedHost(
  host: string | undefined,
  error: 'HOST_MALFORMED' | 'FORWARDED_HOST_MALFORMED' = 'HOST_MALFORMED',
): void {
  if (host !== undefined && !isHostValue(host)) throw HttpError.of(error);
}

/**
 * Refuses a malformed Host, and a malformed host read elsewhere; returns the
 * host the request is routed by: the one modules and upstreams are told of
 * (`ctx.host`), behind a trusted proxy its X-Forwarded-Host, over HTTP/2 the
 * `:authority`. Matched against any other, a request for one host would
 * reach the Mappings of another.
 */
export function refuseMalformedHosts(ctx: Context): string {
  const written = ctx.req.headers.host;
  refuseMalformedHost(written);
  const host = requestHost(ctx);
  if (host !== written) refuseMalformedHost(host, 'FORWARDED_HOST_MALFORMED');
  return host;
}
