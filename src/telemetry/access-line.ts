/**
 * @module telemetry/access-line
 * Access log lines written straight to a logger's destination, a batch at a
 * time: the line pino would write for the same fields, without pino's
 * per-line work (walking the object, one write per line), which costs about
 * as much as the rest of a gateway request.
 */
import type { Logger } from 'pino';
import { loggerBindingsText, loggerDestination, loggerTimeField } from '../platform';
import { gathersLines } from './log-destination';

/** One answered request, as the access log records it. */
export interface AccessLogEntry {
  req_id: string;
  method: string;
  path: string;
  route: string;
  status: number;
  duration_ms: number;
  remote: string;
  /** HTTP/1.0, HTTP/1.1 or HTTP/2, as Envoy's `%PROTOCOL%`; absent where it could not be told. */
  protocol?: string;
  /** The names of the query arguments; their values may hold secrets and are never logged. */
  query?: string[];
  user?: string;
  /** The registry's code of the error it was answered with (`LIMIT_NOT_INTEGER`), when it was one. */
  error?: string;
  /** The client went away before the response was complete. */
  aborted?: true;
  /** The upstream cut the answer short after its headers (Envoy's `UR` flag). */
  upstream_reset?: true;
  /** The server cut the answer when its shutdown grace ran out. */
  cut_at_shutdown?: true;
  /** The request's trace and SERVER span, when it is traced: the line and the spans meet on them. */
  trace_id?: string;
  span_id?: string;
}

/** Writes access log lines through a logger. */
export interface AccessLineWriter {
  /** Whether lines at `info` are written at all now. */
  enabled(): boolean;
  write(entry: AccessLogEntry): void;
  /** Writes what waits now, rather than at the end of this turn of the event loop. */
  flush(): void;
}

// Loggers built by createLogger: their lines are pino's defaults (numeric
// level, `msg`, no mixin or formatters), which the fast path reproduces.
const plainLoggers = new WeakSet<Logger>();

/** Marks a logger whose lines the fast path may write (one made by createLogger). */
export function markPlainLogger(logger: Logger): Logger {
  plainLoggers.add(logger);
  return logger;
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f\ud800-\udfff]/;

/** A JSON string literal, quoted without JSON.stringify when nothing needs escaping. */
function quoted(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/**
 * The writer for `logger`. With a logger from createLogger, lines are
 * formatted here and handed to its destination: to a `logDestination`
 * as they come, to any other once per turn of the event loop, in one write;
 * with any other logger, each entry is a `logger.info` call, so that its own
 * formatters and hooks apply.
 */
export function accessLineWriter(logger: Logger): AccessLineWriter {
  const info = logger.levels.values.info;
  if (!plainLoggers.has(logger)) {
    return {
      enabled: () => logger.levelVal <= info,
      write: (entry) => logger.info(entry, 'request'),
      flush: () => undefined,
    };
  }
  const stream = loggerDestination(logger);
  const time = loggerTimeField(logger);
  const bindings = loggerBindingsText(logger);
  const head = `{"level":${info}`;

  /** One line, as pino would write it for the same fields. */
  function lineOf(entry: AccessLogEntry): string {
    let line = `${head}${time()}${bindings},"req_id":${quoted(entry.req_id)},"method":${quoted(entry.method)},"path":${quoted(entry.path)},"route":${quoted(entry.route)},"status":${entry.status},"duration_ms":${entry.duration_ms},"remote":${quoted(entry.remote)}`;
    if (entry.protocol !== undefined) line += `,"protocol":"${entry.protocol}"`;
    if (entry.query !== undefined) line += `,"query":${JSON.stringify(entry.query)}`;
    if (entry.user !== undefined) line += `,"user":${quoted(entry.user)}`;
    if (entry.error !== undefined) line += `,"error":${quoted(entry.error)}`;
    if (entry.aborted) line += ',"aborted":true';
    if (entry.upstream_reset) line += ',"upstream_reset":true';
    if (entry.cut_at_shutdown) line += ',"cut_at_shutdown":true';
    // Hex digits only: nothing to escape.
    if (entry.trace_id !== undefined) line += `,"trace_id":"${entry.trace_id}","span_id":"${entry.span_id}"`;
    return `${line},"msg":"request"}\n`;
  }

  // The process's own destination gathers lines into chunks itself: each goes
  // to it at once, and is encoded there once, into the chunk it goes out in.
  if (gathersLines(stream)) {
    return {
      enabled: () => logger.levelVal <= info,
      write: (entry) => void stream.write(lineOf(entry)),
      flush: () => undefined,
    };
  }

  // Any other destination gets a turn's lines in one write, joined into one
  // flat string: one appended to another would make a rope that the
  // destination flattens again to measure it.
  let pending: string[] = [];
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.length === 1 ? pending[0] : pending.join('');
    pending = [];
    stream.write(chunk);
  }

  return {
    enabled: () => logger.levelVal <= info,
    write(entry) {
      pending.push(lineOf(entry));
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
