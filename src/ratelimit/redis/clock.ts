/**
 * @module ratelimit/redis/clock
 * How far Redis's clock may be ahead of this process's, learnt from the
 * replies, so that a script can be told a cutoff in Redis's own time: past
 * it, the caller has given up, and the script must count nothing. The bound
 * errs late, never early: a script that runs in time is never refused.
 */

/**
 * Milliseconds the bound widens per millisecond since its last sample: it
 * follows a Redis clock that runs faster than this one (real clocks drift by
 * less than a tenth of this).
 */
const DRIFT = 0.001;

export interface RedisClockBound {
  /**
   * The latest Redis time (ms) that can be this process's time `t` (ms, on
   * the clock given), or 0 while no reply has been seen.
   */
  latest(t: number): number;
  /**
   * Learns from a reply: a script sent at `sentAt` (this clock) read
   * `redisMs` (Redis's clock, whole ms) when it ran.
   */
  sample(sentAt: number, redisMs: number): void;
  /** Forgets what was learnt, then learns from this sample alone: Redis's clock was set forward. */
  restart(sentAt: number, redisMs: number): void;
  /** Forgets what was learnt (a new connection, perhaps another server). */
  clear(): void;
}

export function createRedisClockBound(): RedisClockBound {
  // Redis time minus this time, at most, as of `at`.
  let ahead = NaN;
  let at = 0;
  const bound = (t: number) => ahead + (t - at) * DRIFT;

  function restart(sentAt: number, redisMs: number): void {
    // The script ran after it was sent, within the millisecond Redis read.
    ahead = redisMs + 1 - sentAt;
    at = sentAt;
  }

  return {
    latest: (t) => (Number.isNaN(ahead) ? 0 : Math.ceil(t + bound(t))),
    sample(sentAt, redisMs) {
      if (Number.isNaN(ahead) || redisMs + 1 - sentAt < bound(sentAt)) restart(sentAt, redisMs);
    },
    restart,
    clear() {
      ahead = NaN;
    },
  };
}
