/**
 * @module http/undici
 * undici, required when first used: by a Mapping to an HTTP upstream or a
 * remote auth service. Its 110 modules hold about 5 MB of heap once loaded,
 * which every major collection marks again for as long as the process
 * lives; a deployment that forwards nothing over HTTP never loads them.
 */
import type { IncomingHttpHeaders } from 'node:http';

type Undici = typeof import('undici');

let loaded: Undici | undefined;

/** The undici package, loaded on the first call. */
export function undici(): Undici {
  return (loaded ??= require('undici') as Undici);
}

/** undici's own reading of raw header lines into Node's header object, as its controller interface hands them over. */
export function parseRawHeaders(raw: Buffer[]): IncomingHttpHeaders {
  return undici().util.parseHeaders(raw);
}
