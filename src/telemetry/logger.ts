/**
 * @module telemetry/logger
 * The process logger: pino writing JSON lines, with every place a credential
 * could appear in a logged object censored.
 */
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** `trace`..`fatal` or `silent`. Default: `LOG_LEVEL`, else `info`. */
  level?: string;
  /** Where the lines go. Default: standard output. */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** The `name` field of every line. Default `gatehouse`. */
  name?: string;
}

/**
 * Paths censored in anything logged. A header object may be logged on its own
 * (`headers`), inside a request (`req.headers`) or flattened (`authorization`).
 */
export const REDACTED_PATHS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'password',
  'cookie',
  'set-cookie',
  'headers.authorization',
  'headers["proxy-authorization"]',
  'headers.cookie',
  'headers["set-cookie"]',
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.authorization',
];

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** Builds a logger; an unknown level is an error, so that a typo in `LOG_LEVEL` is seen at start. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = (options.level ?? process.env.LOG_LEVEL ?? 'info').trim().toLowerCase();
  if (!LEVELS.has(level)) {
    throw new Error(`unknown log level '${level}'; use one of ${[...LEVELS].join(', ')}`);
  }
  return pino(
    {
      name: options.name ?? 'gatehouse',
      level,
      redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination as DestinationStream | undefined,
  );
}

/**
 * For `errorHandler({onUnexpected})`: logs an unexpected error (a 500 that
 * was not an HttpError) with its stack and the request id, never the request's
 * headers.
 */
export function logUnexpectedError(logger: Logger): (err: unknown, ctx: { method: string; path: string; state: Record<string, unknown> }) => void {
  return (err, ctx) => {
    logger.error({ err, req_id: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'unexpected error');
  };
}
