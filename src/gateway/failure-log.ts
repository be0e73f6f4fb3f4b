/**
 * @module gateway/failure-log
 * The warning a stage writes when the service it asks fails: at most one per
 * interval, saying how many failures it stands for, so that a service that
 * is down for a minute costs a few lines, not one per request.
 */

/** The logging a stage does: pino's shape. */
export interface StageLogger {
  warn(obj: object, msg: string): void;
}

/** A failure is logged at most this often: once per burst of failures. */
export const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * Returns a function to call on every failure; it writes `message` with
 * `fields`, the failure's message and the count of failures since the last
 * line, when the interval has passed.
 */
export function pacedFailureLog(
  logger: StageLogger,
  now: () => number = Date.now,
  intervalMs = FAILURE_LOG_INTERVAL_MS,
): (err: unknown, fields: object, message: string) => void {
  let lastLog = -Infinity;
  let unlogged = 0;
  return (err, fields, message) => {
    unlogged++;
    const t = now();
    if (t - lastLog < intervalMs) return;
    logger.warn({ ...fields, err: (err as Error | undefined)?.message ?? String(err), failures: unlogged }, message);
    lastLog = t;
    unlogged = 0;
  };
}
