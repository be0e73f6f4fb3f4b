/**
 * @module gatehouse/serving/http2/limits
 * The bounds of an HTTP/2 connection, each set on purpose rather than left
 * at Node's defaults (one of which, the number of streams a client may open
 * at once, is unlimited): what each stops is in docs/operations.md
 * (HTTP/2). Two are options; the others follow from the gateway's HTTP/1.1
 * bounds, so that what passes over one protocol passes over the other.
 */
import http from 'node:http';
import type { ServerOptions } from 'node:http2';
import { MAX_REQUEST_HEADERS } from '../../../http';

/** The bounds a user may set. */
export interface Http2Limits {
  /** Streams (requests) one connection may have open at once; a client queues the rest. Default 100. */
  readonly maxConcurrentStreams?: number;
  /** What one connection may hold in memory (header tables, streams, frames queued), in MiB. Default 10. */
  readonly maxSessionMemoryMib?: number;
}

/** SETTINGS_MAX_CONCURRENT_STREAMS by default: RFC 9113 asks for no fewer than 100, nginx and h2o send 128 and 100. */
export const MAX_CONCURRENT_STREAMS = 100;

/** Node's default per-connection memory bound (MiB), kept: 100 streams' windows and a few answers queued fit in it. */
export const MAX_SESSION_MEMORY_MIB = 10;

/**
 * Streams a connection may open before the share of them its client resets
 * early is judged (half or more closes it): Envoy's rule against rapid
 * reset, at the count a client that cancels now and then never reaches.
 */
export const PREMATURE_RESET_MIN_STREAMS = 100;

/** The pseudo-headers of a request (`:method`, `:scheme`, `:authority`, `:path`), which Node counts with its fields. */
const PSEUDO_HEADERS = 4;

/**
 * The largest header list a request may carry, as HPACK counts it (each
 * field's name and value, and 32 octets): the size an HTTP/1.1 request's
 * header section may have, with room for the most fields it may carry. It
 * bounds what a small compressed block may expand to (an HPACK bomb).
 */
export function maxHeaderListSize(): number {
  return http.maxHeaderSize + 32 * (MAX_REQUEST_HEADERS + PSEUDO_HEADERS);
}

/**
 * The size of a header list as HPACK counts it (RFC 9113 §6.5.2), from
 * Node's raw list (name, value, name...). Node holds a request to
 * `maxHeaderListSize` only once its client has acknowledged the SETTINGS
 * that announce it: a client that never does could send lists of any size.
 */
export function headerListSize(raw: readonly string[]): number {
  let size = 0;
  for (let i = 0; i < raw.length; i += 2) size += raw[i].length + raw[i + 1].length + 32;
  return size;
}

/**
 * How long a client may take to acknowledge the gateway's SETTINGS, at
 * most, in ms: until it does, Node does not hold its requests to the
 * header list size. A client acknowledges them as soon as they arrive.
 */
export const SETTINGS_TIMEOUT_MS = 10_000;

/**
 * Node's HTTP/2 server options for `limits`. Each bound, and what a client
 * past it gets:
 * - `maxConcurrentStreams`: a stream opened over it is refused
 *   (REFUSED_STREAM), and after `maxSessionRejectedStreams` of those the
 *   connection is closed (ENHANCE_YOUR_CALM);
 * - `maxHeaderListSize`, `maxHeaderListPairs`: a request over them is reset;
 *   one field more than the gateway takes over HTTP/1.1 still reaches it,
 *   so that it is answered 431 as over HTTP/1.1;
 * - `maxSessionInvalidFrames`: frames a well-behaved client never sends;
 * - `maxSettings`, `maxOutstandingPings`: entries in one SETTINGS frame,
 *   pings of the gateway's own unanswered;
 * - `maxSessionMemory`: past it new streams are refused.
 * Floods of PING and SETTINGS frames are bounded by nghttp2 itself (1000
 * acknowledgements queued), which closes such a connection; resets by the
 * gateway (see {@link PREMATURE_RESET_MIN_STREAMS}).
 */
export function http2ServerOptions(limits: Http2Limits = {}): ServerOptions {
  return {
    maxSessionMemory: limits.maxSessionMemoryMib ?? MAX_SESSION_MEMORY_MIB,
    maxHeaderListPairs: MAX_REQUEST_HEADERS + PSEUDO_HEADERS + 1,
    maxSettings: 16,
    maxOutstandingPings: 10,
    maxSessionInvalidFrames: 100,
    maxSessionRejectedStreams: 100,
    // The gateway pushes nothing: no stream of its own is ever open.
    peerMaxConcurrentStreams: 100,
    maxDeflateDynamicTableSize: 4096,
    settings: {
      maxConcurrentStreams: limits.maxConcurrentStreams ?? MAX_CONCURRENT_STREAMS,
      maxHeaderListSize: maxHeaderListSize(),
      headerTableSize: 4096,
      initialWindowSize: 65_535,
      maxFrameSize: 16_384,
      enableConnectProtocol: false,
    },
  };
}
