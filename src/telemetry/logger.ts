/**
 * @module telemetry/logger
 * The process logger: pino writing JSON lines, with every place a credential
 * could appear in a logged object censored.
 */
import { hostname } from 'node:os';
import pino, { type DestinationStream, type Logger } from 'pino';
import type Koa from 'koa';
import { statusOf } from '../errors';
import { traceOf } from '../tracing/types';
import { markPlainLogger } from './access-line';
import { droppedLinesOf, logDestination } from './log-destination';

export {
  DEFAULT_LOG_BACKLOG_BYTES,
  DEFAULT_LOG_FLUSH_MS,
  logDestination,
  type LogDestination,
  type LogDestinationOptions,
} from './log-destination';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** `trace`..`fatal` or `silent`. Default: `LOG_LEVEL`, else `info`. */
  level?: string;
  /** Where the lines go. Default: standard output, through {@link logDestination}. */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** The `name` field of every line. Default `gatehouse`. */
  name?: string;
  /** Fields of every line besides pino's `pid` and `hostname`: a worker's `worker`. */
  fields?: Readonly<Record<string, string | number>>;
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

/**
 * pino's ISO `time` field, the date and time to the second formatted once a
 * second: under load many lines share a millisecond, and a gateway answering
 * a few thousand requests a second formats a date (about 1 µs) for most of them.
 */
function isoTimeOncePerMs(): () => string {
  let lastMs = -1;
  let lastSecond = -1;
  let head = '';
  let field = '';
  return () => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      const ms = now % 1000;
      if (now - ms !== lastSecond) {
        lastSecond = now - ms;
        // `,"time":"2026-11-23T12:00:01.`: the ISO date up to its milliseconds.
        head = `,"time":"${new Date(lastSecond).toISOString().slice(0, 20)}`;
      }
      field = `${head}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
    }
    return field;
  };
}

/** The destination each logger made by {@link createLogger} writes to. */
const destinations = new WeakMap<Logger, unknown>();

/** How many lines the destination of `logger` (one made by {@link createLogger}) dropped, and its name; undefined for a destination that does not count them. */
export function droppedLogLines(logger: Logger): { name: string; droppedLines: number } | undefined {
  return droppedLinesOf(destinations.get(logger));
}

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** Builds a logger; an unknown level is an error, so that a typo in `LOG_LEVEL` is seen at start. */
export function createLogger(options: LoggerOptions = {}): Logger {
  // A variable set empty (`LOG_LEVEL=${LOG_LEVEL}` in a compose file) is unset, as HOST or PORT are.
  const level = (options.level ?? (process.env.LOG_LEVEL?.trim() || 'info')).trim().toLowerCase();
  if (!LEVELS.has(level)) {
    throw new Error(`unknown log level '${level}'; use one of ${[...LEVELS].join(', ')}`);
  }
  const destination = options.destination ?? logDestination();
  const logger = pino(
    {
      name: options.name ?? 'gatehouse',
      level,
      ...(options.fields ? { base: { pid: process.pid, hostname: hostname(), ...options.fields } } : {}),
      redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
      timestamp: isoTimeOncePerMs(),
    },
    destination,
  );
  destinations.set(logger, destination);
  return markPlainLogger(logger);
}

/**
 * For `errorHandler({onUnexpected})`: logs an unexpected error (a 500 that
 * was not an HttpError) with its stack and the request id, never the request's
 * headers.
 */
export function logUnexpectedError(
  logger: Logger,
): (err: unknown, ctx: { method: string; path: string; state: Record<string, unknown> }) => void {
  return (err, ctx) => {
    const trace = traceOf(ctx.state);
    const ids = trace === undefined ? undefined : { trace_id: trace.traceId, span_id: trace.spanId };
    logger.error({ err, req_id: ctx.state.requestId, method: ctx.method, path: ctx.path, ...ids }, 'unexpected error');
  };
}

/**
 * Logs, as {@link logUnexpectedError} does, every error of status 500 or more
 * that `app` emits: a module's error handler answers an unexpected error with
 * a bare 500 and emits it on `ctx.app`, which a silent app would drop with its
 * cause. Returns the logging function, for error handlers of its own.
 */
export function logAppErrors(
  app: Koa,
  logger: Logger,
): (err: unknown, ctx: { method: string; path: string; state: Record<string, unknown> }) => void {
  const logUnexpected = logUnexpectedError(logger);
  app.on('error', (err: unknown, ctx: Koa.Context) => {
    if (statusOf(err) >= 500) logUnexpected(err, ctx);
  });
  return logUnexpected;
}
