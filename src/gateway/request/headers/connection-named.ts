/**
 * @module gateway/request/headers/connection-named
 * The headers a client names in a request's `Connection` header, which makes
 * them hop-by-hop (RFC 9110 §7.6.1): dropped as the request arrives, before
 * routing, the stages and the Mapping's header edits, as Envoy's codec drops
 * them, so that what the gateway itself adds afterwards is never taken for
 * one. The hop-by-hop headers by name are src/http's.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { connectionNamed, HttpError } from '../../../http';

/**
 * Headers a client may not name in `Connection`: dropping them would hide
 * where the request came from, or change how its body or its target is read.
 * Envoy answers 400 for the `X-Forwarded-*` ones and pseudo-headers.
 */
const NOT_NOMINABLE = new Set([
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'host',
  'content-length',
  'transfer-encoding',
]);

/** More names than this in one `Connection` header is a 400, as in Envoy. */
const MAX_NOMINATED = 10;

/**
 * Drops the headers a request's `Connection` header names. Throws a 400
 * {@link HttpError} when it names too many, or one that may not be dropped
 * (`Host`, `Content-Length`, `Transfer-Encoding`, `X-Forwarded-*`, a
 * pseudo-header).
 */
export function dropNominatedHeaders(headers: IncomingHttpHeaders): void {
  const named = connectionNamed(headers.connection);
  if (named === null) return;
  if (named.length >= MAX_NOMINATED) throw HttpError.of('CONNECTION_NAMES_TOO_MANY');
  for (const name of named) {
    if (NOT_NOMINABLE.has(name) || name.startsWith(':')) {
      throw HttpError.of('CONNECTION_NAMES_PROTECTED', { name });
    }
  }
  for (const name of named) delete headers[name];
}
