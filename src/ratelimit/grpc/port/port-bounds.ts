/**
 * @module ratelimit/grpc/port/port-bounds
 * The default bounds on the gRPC port's connections and streams: how many,
 * how large a message, how long each may take to start or to send its
 * request, how long one may sit idle. Each is an option of
 * `createRateLimitGrpcServer`.
 */

/**
 * Most calls one connection may have open at once by default. HTTP/2 leaves
 * it unbounded, and each open stream (a health `Watch` above all, which
 * stays open) holds memory and a share of the event loop: one connection
 * could otherwise hold tens of thousands. A client past it queues its
 * calls, or opens another connection.
 */
export const MAX_CONCURRENT_STREAMS = 1000;

/**
 * Largest message a call may send by default: 64 KiB. A request of an
 * Envoy is a few hundred bytes (a handful of descriptors of a handful of
 * entries, their values header values), and decoding holds the event loop
 * in proportion to a message's entries: at grpc-js's 4 MiB, one call would
 * hold up every HTTP request while it is read.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/**
 * Most connections open at once by default. An Envoy keeps one or a few per
 * worker thread; a flood of connections (each a socket and an HTTP/2
 * session) is refused rather than left to exhaust memory and descriptors.
 */
export const MAX_CONNECTIONS = 4096;

/**
 * The wait for a connection's preface by default: gRPC's clients give up on
 * a connection attempt after 20 s (its MIN_CONNECT_TIMEOUT), so a longer
 * wait serves nobody; an HTTP/2 client sends its preface at once.
 */
export const HANDSHAKE_TIMEOUT_MS = 20_000;

/**
 * The wait for a call's request by default. An Envoy sends a request of a
 * few hundred bytes with its headers, and gives up on its answer after 20 ms
 * (its `timeout`); no caller is waiting for a request still arriving after
 * 10 s.
 */
export const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Most calls waiting for their request by default: 1000 of 64 KiB at most
 * (and the stream's 64 KiB flow-control window) are under 128 MiB. Calls
 * from a well-behaved client wait microseconds, a few hundred at once in a
 * burst.
 */
export const MAX_INCOMPLETE_REQUESTS = 1000;

/** How long a connection with no call is kept by default: 5 minutes. */
export const IDLE_TIMEOUT_MS = 300_000;

/**
 * How often each connection is pinged by default: 2 hours, as Go's gRPC
 * server. A peer gone without a FIN (a node powered off, a NAT entry
 * dropped) with a health `Watch` open is never idle, and would be kept.
 */
export const KEEPALIVE_TIME_MS = 7_200_000;
