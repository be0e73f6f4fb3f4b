/**
 * @module gatehouse/serving/http2/timeouts
 * The time bounds of HTTP/2 connections and requests, as HTTP/1.1 has
 * them: a connection with no stream open is closed after the keep-alive
 * timeout, and a request whose body has not all come within the request
 * timeout fails with 408, as Node's HTTP/1.1 server fails it. One sweep, a
 * quarter of the shorter bound apart, counts the time for all: a timer per
 * connection or stream would be pushed back by every frame.
 */
import type { ServerHttp2Session } from 'node:http2';
import { failRequestBody, HttpError } from '../../../http';
import type { Http2Request } from './request';

/** What the sweep knows of a connection. */
export interface Sweepable {
  readonly session: ServerHttp2Session;
  /** Streams open now. */
  readonly open: number;
  /** The sweep at which its last stream closed, or it opened. */
  readonly idleSince: number;
}

export interface SweepOptions {
  /** How long a connection with no stream open is kept, in ms; 0 keeps it. */
  readonly idleTimeoutMs: number;
  /** How long a request's body may take to come whole, in ms; 0 waits for ever. */
  readonly requestTimeoutMs: number;
  readonly connections: ReadonlySet<Sweepable>;
}

/** The sweep of a listener's HTTP/2 connections. */
export interface Sweeper {
  /** The sweeps so far: what a connection is stamped with as it goes idle. */
  readonly now: number;
  /** Watches a request whose body is still to come. */
  receiving(req: Http2Request): void;
  /** Forgets a request (its stream closed). */
  done(req: Http2Request): void;
  stop(): void;
}

/** Sweeps a bound this many times over before it is past: it is kept to within a quarter. */
const SWEEPS_PER_BOUND = 4;

/** Starts the sweep; none runs when neither bound is set. */
export function sweepHttp2(options: SweepOptions): Sweeper {
  const { idleTimeoutMs, requestTimeoutMs, connections } = options;
  const bounds = [idleTimeoutMs, requestTimeoutMs].filter((ms) => ms > 0);
  const tickMs = bounds.length === 0 ? 0 : Math.min(...bounds) / SWEEPS_PER_BOUND;
  /** Requests whose body is still coming, with the sweep they began at. */
  const receiving = new Map<Http2Request, number>();
  let now = 0;

  function sweep(): void {
    now++;
    if (idleTimeoutMs > 0) {
      for (const connection of connections) {
        const { session } = connection;
        if (connection.open === 0 && (now - connection.idleSince) * tickMs >= idleTimeoutMs && !session.closed)
          session.close();
      }
    }
    for (const [req, since] of receiving) {
      if (req.complete || req.destroyed) receiving.delete(req);
      else if (requestTimeoutMs > 0 && (now - since) * tickMs >= requestTimeoutMs) {
        receiving.delete(req);
        // Its readers (a module, the proxy, the auth stage) fail with it, and the gateway answers 408.
        failRequestBody(req as never, HttpError.of('BODY_TIMEOUT'));
      }
    }
  }

  const timer = tickMs > 0 ? setInterval(sweep, tickMs) : undefined;
  timer?.unref();
  return {
    get now() {
      return now;
    },
    receiving(req) {
      if (timer !== undefined) receiving.set(req, now);
    },
    done(req) {
      receiving.delete(req);
    },
    stop() {
      clearInterval(timer);
      receiving.clear();
    },
  };
}
