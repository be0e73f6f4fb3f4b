/**
 * @module gateway/claimed-user
 * Headers a client may not send itself, taken off the request: above all
 * `X-Travel-User`, which only the auth stage may set. The gateway drops a
 * client's copy as the request arrives, whether or not an AuthService is
 * configured, so that no backend, rate-limit label or access log line takes a
 * client's claim for a user.
 */
import type { IncomingMessage } from 'node:http';
import { USER_HEADER } from '../auth';

/** Drops `name` (lower case) from `rawHeaders` too, for a forwarder or module that reads those. */
export function scrubRaw(raw: string[], name: string): void {
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (raw[i].toLowerCase() === name) raw.splice(i, 2);
  }
}

/**
 * Removes a header from a request, parsed and raw, in every spelling a backend
 * may read as the same name: CGI, WSGI, Rack and PHP turn `X_Travel_User` and
 * `X-Travel-User` into the same `HTTP_X_TRAVEL_USER`, so an underscore spelling
 * goes too. Nothing allocated when neither is there.
 */
export function removeRequestHeader(req: IncomingMessage, name: string): void {
  if (req.headers[name] !== undefined) {
    delete req.headers[name];
    scrubRaw(req.rawHeaders, name);
  }
  dropUnderscoreSpellings(req, name);
}

const UNDERSCORE = 95;
const DASH = 45;

/** Whether raw header name `raw` is `name` (lower case) once `_` reads as `-` and case is ignored. */
function sameWithUnderscores(raw: string, name: string): boolean {
  if (raw.length !== name.length || raw.indexOf('_') < 0) return false;
  for (let i = 0; i < raw.length; i++) {
    let c = raw.charCodeAt(i);
    if (c === UNDERSCORE) c = DASH;
    else if (c >= 65 && c <= 90) c += 32;
    if (c !== name.charCodeAt(i)) return false;
  }
  return true;
}

function dropUnderscoreSpellings(req: IncomingMessage, name: string): void {
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (!sameWithUnderscores(raw[i], name)) continue;
    delete req.headers[raw[i].toLowerCase()];
    raw.splice(i, 2);
  }
}

/** Removes the client's own `X-Travel-User`: only the auth service names the user. */
export function dropClaimedUser(req: IncomingMessage): void {
  removeRequestHeader(req, USER_HEADER);
}
