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

/** Removes a header from a request, parsed and raw; nothing to do (and nothing allocated) when it is absent. */
export function removeRequestHeader(req: IncomingMessage, name: string): void {
  if (req.headers[name] === undefined) return;
  delete req.headers[name];
  scrubRaw(req.rawHeaders, name);
}

/** Removes the client's own `X-Travel-User`: only the auth service names the user. */
export function dropClaimedUser(req: IncomingMessage): void {
  removeRequestHeader(req, USER_HEADER);
}
