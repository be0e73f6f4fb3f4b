/**
 * @module gatehouse/readiness
 * What `/gateway/v0/check_ready` asks besides a loaded config: that Redis,
 * when the rate limits are kept there, is connected and answers PING, and
 * quickly; and that the bookings database answers. Losing and regaining the
 * Redis connection is logged, once each.
 */
import { withinDeadline } from '../ratelimit';
import type { Logger } from '../telemetry';

/** How long `/gateway/v0/check_ready` waits for Redis to answer PING. */
export const READY_PING_TIMEOUT_MS = 1000;

/** What readiness needs of a Redis client (ioredis). */
export interface RedisConnection {
  /** `ready` once connected; `connecting`, `reconnecting`... otherwise. */
  readonly status: string;
  ping(): Promise<string>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'ready' | 'close', listener: () => void): unknown;
}

/** Resolves when `client` answers PING within `ms`; rejects with the reason otherwise. */
export function pingRedis(client: { ping(): Promise<string> }, ms: number): Promise<void> {
  // Timed as a rate-limit decision is: a PONG that came while a burst held
  // the event loop up is no failure, and would take a busy gateway out of rotation.
  const late = new Error(`Redis did not answer PING within ${ms} ms`);
  return withinDeadline(
    ms,
    () => client.ping(),
    () => late,
  ).then(
    (reply) => {
      if (reply !== 'PONG') throw new Error(`Redis answered PING with ${reply}`);
    },
    (err: unknown) => {
      throw err === late ? late : new Error(`Redis does not answer: ${(err as Error)?.message ?? String(err)}`);
    },
  );
}

/**
 * The readiness check of a Redis store's client. A client that is not
 * connected refuses every command at once with words of its own ("Stream
 * isn't writeable and enableOfflineQueue options is false"): the check says
 * instead why the connection failed, as the client last heard it (refused,
 * a name that does not resolve, a password refused), never the URL. The
 * first failure of an outage and the reconnection are logged, so that a
 * wrong `REDIS_URL` shows at start, before any request needs a decision.
 */
export function redisReadiness(
  client: RedisConnection,
  logger: Logger,
  ms: number = READY_PING_TIMEOUT_MS,
): () => Promise<void> {
  let lastError: string | undefined;
  let down = false;
  const lost = (reason: string) => {
    lastError = reason;
    if (down) return;
    down = true;
    logger.warn(
      { store: 'redis', err: reason },
      'Redis is unreachable: rate-limit decisions follow the failure mode until it is back',
    );
  };
  client.on('error', (err) => lost(err.message));
  // A server that goes away closes the connection without an error; the
  // attempts to reconnect then fail with one. A close asked for (the client
  // quit at stop) ends the client, and is no outage.
  client.on('close', () => {
    setImmediate(() => {
      if (client.status !== 'end') lost(lastError ?? 'the connection was closed');
    });
  });
  client.on('ready', () => {
    if (down) logger.info({ store: 'redis' }, 'Redis is connected again');
    down = false;
    lastError = undefined;
  });
  return () => {
    if (client.status !== 'ready') {
      return Promise.reject(new Error(`Redis is not connected: ${lastError ?? `still ${client.status}`}`));
    }
    return pingRedis(client, ms);
  };
}

/** A readiness check: resolves when ready, rejects with why not. */
export type ReadinessCheck = () => Promise<void>;

/**
 * One check of all `checks` (the falsy ones skipped; none: `undefined`),
 * run at once: it rejects naming every one that failed, so that an
 * operator sees Redis and the database down together, not one at a time.
 */
export function allReady(checks: readonly (ReadinessCheck | false | undefined)[]): ReadinessCheck | undefined {
  const present = checks.filter((c): c is ReadinessCheck => typeof c === 'function');
  if (present.length === 0) return undefined;
  return async () => {
    const outcomes = await Promise.allSettled(present.map((check) => check()));
    const reasons = outcomes.flatMap((o) =>
      o.status === 'rejected' ? [(o.reason as Error)?.message ?? String(o.reason)] : [],
    );
    if (reasons.length > 0) throw new Error(reasons.join('; '));
  };
}
