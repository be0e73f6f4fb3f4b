/**
 * @module ratelimit/limits/units
 * The time units of a limit and the length of their fixed windows, as
 * envoyproxy/ratelimit counts them (a month is 30 days, a year 365).
 */
import type { RateLimitUnit } from '../types';

/** Every unit a limit may use, in increasing length. */
export const RATE_LIMIT_UNITS: readonly RateLimitUnit[] = ['SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'YEAR'];

const DAY = 86_400;

/** Window length in seconds, by unit. */
export const UNIT_SECONDS: Readonly<Record<RateLimitUnit, number>> = {
  SECOND: 1,
  MINUTE: 60,
  HOUR: 3_600,
  DAY,
  WEEK: 7 * DAY,
  MONTH: 30 * DAY,
  YEAR: 365 * DAY,
};

/** Whether a string names a unit (upper case). */
export function isRateLimitUnit(unit: unknown): unit is RateLimitUnit {
  return typeof unit === 'string' && Object.prototype.hasOwnProperty.call(UNIT_SECONDS, unit);
}
