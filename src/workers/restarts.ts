/**
 * @module workers/restarts
 * When a worker that died is started again: at once the first time, then
 * after a back-off that doubles with each death in the window; and when
 * deaths come so fast that starting again would only spin, never.
 */

/** Deaths within {@link CRASH_WINDOW_MS} that stop the gateway. */
export const CRASH_LIMIT = 5;
/** The window deaths are counted in, in ms. */
export const CRASH_WINDOW_MS = 60_000;
/** The first back-off, in ms; it doubles with each death in the window. */
const FIRST_BACKOFF_MS = 100;

export interface Restarts {
  /**
   * Counts a death at `now` (ms); how long to wait before starting the
   * worker again, or undefined when the deaths make a crash loop.
   */
  died(now: number): number | undefined;
  /** Deaths within the window at the last count. */
  readonly recent: number;
}

export function restartPolicy(limit = CRASH_LIMIT, windowMs = CRASH_WINDOW_MS): Restarts {
  const deaths: number[] = [];
  return {
    died(now) {
      deaths.push(now);
      while (deaths.length > 0 && deaths[0] <= now - windowMs) deaths.shift();
      if (deaths.length >= limit) return undefined;
      return deaths.length === 1 ? 0 : FIRST_BACKOFF_MS * 2 ** (deaths.length - 2);
    },
    get recent() {
      return deaths.length;
    },
  };
}
