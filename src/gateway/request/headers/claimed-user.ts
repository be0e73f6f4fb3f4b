/**
 * @module gateway/request/headers/claimed-user
 * Headers a client may not send itself, taken off the request: above all
 * `X-Travel-User`, which only the auth stage may set. The gateway drops a
 * client's copy as the request arrives, whether or not an AuthService is
 * configured, so that no backend, rate-limit label or access log line takes a
 * client's claim for a user. Likewise the headers that name another path
 * than the request's own to some backends; those only a proxy sets are in
 * `./proxy-owned`.
 */
import type { IncomingMessage } from 'node:http';
import { USER_HEADER } from '../../../auth';
import { dropLookalikesOf } from './lookalike-headers';

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
