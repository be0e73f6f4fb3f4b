/**
 * @module bookings/database/errors
 * Which database failures mean "unavailable" (a 503 to retry: unreachable,
 * refused, too slow, shutting down) rather than a fault of the query, and
 * the error that says so without the password.
 */

/** Why a call found the database unavailable: it failed to answer, did not answer in time, or is still being opened. */
export type UnavailableKind = 'unavailable' | 'timeout' | 'opening';

/**
 * The booking database cannot answer now. `message` is for clients (what,
 * not where); `reason` is for the log and `check_ready`, and never holds a
 * password.
 */
export class DatabaseUnavailableError extends Error {
  constructor(
    readonly kind: UnavailableKind,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      kind === 'timeout'
        ? 'the booking database did not answer in time'
        : kind === 'opening'
          ? 'the booking database is opening'
          : 'the booking database is unavailable',
      options,
    );
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * Node's socket errors (the server is not there, or went away) and file
 * errors (the embedded database's disk is full, read-only or failing).
 */
const SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EIO',
]);

/**
 * SQLSTATEs that say "not now" rather than "not this query": class 08
 * (connection), 28 (credentials), 3D000 (no such database), 53 (out of
 * disk, connections or memory), 57 (cancelled by statement_timeout,
 * shutting down, starting up), 58 (an I/O error of the server's files),
 * 25006 (a write to a server that takes none: a standby, or a primary
 * demoted by a failover), 55P03 (lock_timeout), 40001 and 40P01 (a
 * conflict with another transaction, to retry).
 */
function unavailableState(code: string): boolean {
  return (
    /^(08|28|53|57|58)/.test(code) ||
    code === '3D000' ||
    code === '25006' ||
    code === '55P03' ||
    code === '40001' ||
    code === '40P01'
  );
}

// pg's own words for a connection it lost or could not make.
const CONNECTION_WORDS =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Client was closed|connection error/i;

/** Whether `err` means the database is unavailable, not that the query is wrong. */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  if (
    typeof e?.code === 'string' &&
    (SYSTEM_CODES.has(e.code) || (/^[0-9A-Z]{5}$/.test(e.code) && unavailableState(e.code)))
  )
    return true;
  return typeof e?.message === 'string' && CONNECTION_WORDS.test(e.message);
}

/** `text` with every occurrence of `secret` replaced: a driver may quote what it was given. */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('***') : text;
}

/** The words of an error, for a reason: its message, or its code when it has none (an AggregateError of refused addresses). */
export function errorText(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown[] } | null;
  if (typeof e?.message === 'string' && e.message !== '') return e.message;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return errorText(e.errors[0]);
  if (typeof e?.code === 'string') return e.code;
  return String(err);
}

/** `err` as a {@link DatabaseUnavailableError} when it is one of those failures, else as it is. */
export function asUnavailable(err: unknown, password?: string): unknown {
  if (err instanceof DatabaseUnavailableError || !isUnavailable(err)) return err;
  return new DatabaseUnavailableError('unavailable', redact(errorText(err), password), { cause: err });
}
