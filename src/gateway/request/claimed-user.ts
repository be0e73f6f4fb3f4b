/**
 * @module gateway/request/claimed-user
 * Headers a client may not send itself, taken off the request: above all
 * `X-Travel-User`, which only the auth stage may set. The gateway drops a
 * client's copy as the request arrives, whether or not an AuthService is
 * configured, so that no backend, rate-limit label or access log line takes a
 * client's claim for a user. Likewise the headers that name another path
 * than the request's own to some backends, and those only Envoy sets.
 */
import type { IncomingMessage } from 'node:http';
import { USER_HEADER } from '../../auth';
import { dropLookalikesOf, readsAs, readsAsPrefix } from './lookalike-headers';

/** Drops `name` (lower case) from `rawHeaders` too, for a forwarder or module that reads those. */
export function scrubRaw(raw: string[], name: string): void {
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (raw[i].toLowerCase() === name) raw.splice(i, 2);
  }
}

/**
 * Removes a header from a request, parsed and raw, in every spelling a backend
 * may read as the same name: CGI, WSGI, Rack and PHP turn `X_Travel_User`,
 * `X.Travel.User` (PHP) and `X-Travel-User` into the same
 * `HTTP_X_TRAVEL_USER`, so those spellings go too. Nothing allocated when
 * none is there.
 */
export function removeRequestHeader(req: IncomingMessage, name: string): void {
  if (req.headers[name] !== undefined) {
    delete req.headers[name];
    scrubRaw(req.rawHeaders, name);
  }
  dropLookalikesOf(req, name);
}

/** Removes the client's own `X-Travel-User`: only the auth service names the user. */
export function dropClaimedUser(req: IncomingMessage): void {
  removeRequestHeader(req, USER_HEADER);
}

/**
 * Headers that Zend Framework 1, Symfony before 2.7.49 (CVE-2018-14773),
 * Drupal on it, and IIS's URL Rewrite behind it take for the path of the
 * request: `/public/x` with `X-Original-URL: /admin` would be routed to the
 * Mapping of `/public/` and served as `/admin` there.
 */
const PATH_OVERRIDE_HEADERS: readonly string[] = ['x-original-url', 'x-rewrite-url'];

/** Removes the headers that would name another path to the backend than the one the request is routed by. */
export function dropPathOverrides(req: IncomingMessage): void {
  for (let i = 0; i < PATH_OVERRIDE_HEADERS.length; i++) removeRequestHeader(req, PATH_OVERRIDE_HEADERS[i]);
}

/** Envoy's account of the client certificate of a mutual TLS connection. */
const CLIENT_CERT_HEADER = 'x-forwarded-client-cert';
/** Envoy's own headers: what it tells the upstream, and what it takes as orders from a trusted hop. */
const ENVOY_PREFIX = 'x-envoy-';

/**
 * Removes, in one pass, the headers that only a proxy in Envoy's place may
 * set, as Envoy removes them from an external client's request: a backend
 * behind Emissary takes them for Envoy's word. `X-Forwarded-Client-Cert`
 * would name a client certificate never presented (Envoy's default,
 * `forward_client_cert_details: SANITIZE`); the `x-envoy-*` headers would
 * claim an internal caller (`x-envoy-internal`), a client address
 * (`x-envoy-external-address`), a path before rewriting
 * (`x-envoy-original-path`, `x-envoy-original-url`), a deadline
 * (`x-envoy-expected-rq-timeout-ms`) or retries (`x-envoy-retry-on`,
 * `x-envoy-max-retries`). Every spelling a backend reads as one
 * (`X_Envoy_Internal`) goes too. Nothing allocated when none is there.
 */
export function dropProxyOwnedHeaders(req: IncomingMessage): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    const name = raw[i];
    if (!readsAsPrefix(name, ENVOY_PREFIX) && !readsAs(name, CLIENT_CERT_HEADER)) continue;
    delete req.headers[name.toLowerCase()];
    raw.splice(i, 2);
  }
}
