/**
 * @module telemetry/logger
 * The process logger: pino writing JSON lines, with every place a credential
 * could appear in a logged object censored.
 */
import { fstatSync, writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';
import type Koa from 'koa';
import { statusOf } from '../http';
import { markPlainLogger } from './access-line';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** `trace`..`fatal` or `silent`. Default: `LOG_LEVEL`, else `info`. */
  level?: string;
  /** Where the lines go. Default: standard output, through {@link logDestination}. */
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

/**
 * Into a pipe, no write is longer than PIPE_BUF (4096 bytes on Linux), so
 * that it reaches the pipe whole, never interleaved with another writer's:
 * lines stay unbroken. A chunk is written once it nears that size.
 */
const PIPE_MAX_WRITE = 4096;
const PIPE_CHUNK_BYTES = PIPE_MAX_WRITE - 512;
/**
 * A file (or /dev/null, or a terminal) takes each write whole: lines wait for
 * a larger chunk there, so that a busy gateway makes a write every few
 * hundred lines rather than every dozen.
 */
const FILE_MAX_WRITE = 64 * 1024;
const FILE_CHUNK_BYTES = 32 * 1024;
export const DEFAULT_LOG_FLUSH_MS = 100;

/** Whether `fd` is a pipe or a socket (or cannot be told): what PIPE_BUF is about. */
function isPipe(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return true;
  }
}

/**
 * `text` (whole lines) in pieces of at most `max` bytes, each ending with a
 * line of its own; a single line longer than that is a piece by itself.
 */
function pieces(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    // At least `max` / 3 characters fit: no UTF-16 unit takes more than 3 bytes in UTF-8.
    let end = Math.min(text.length, start + Math.floor(max / 3));
    if (end < text.length) {
      const cut = text.lastIndexOf('\n', end - 1);
      end = cut >= start ? cut + 1 : text.indexOf('\n', end) + 1 || text.length;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

/**
 * A log destination that writes in chunks: a write costs a trip through
 * libuv's thread pool (tens of µs of CPU under load), whether it carries a
 * line or a chunk of them. Lines go out once a chunk waits (3.5 KiB into a
 * pipe, 32 KiB into a file) or `flushMs` after the first waiting one,
 * whichever comes first, and all of them when the process exits. `dest` is
 * a file descriptor (default 1, standard output) or a file path.
 */
export function logDestination(dest: number | string = 1, flushMs: number = DEFAULT_LOG_FLUSH_MS): DestinationStream {
  const pipe = typeof dest === 'number' && isPipe(dest);
  const maxWrite = pipe ? PIPE_MAX_WRITE : FILE_MAX_WRITE;
  const chunkBytes = pipe ? PIPE_CHUNK_BYTES : FILE_CHUNK_BYTES;
  // Lines wait here, not in sonic-boom: it measures the UTF-8 length of the
  // whole chunk it is filling on every write, which, a few lines a turn into
  // a 32 KiB chunk, cost more than making the lines. It is handed whole
  // chunks, which it writes at once (minLength 0).
  const stream = pino.destination({ dest, sync: false, minLength: 0, maxWrite });
  const state = stream as unknown as PendingLines;
  const write = stream.write.bind(stream);
  let waiting: string[] = [];
  let waitingBytes = 0;
  let ok = true;

  /** Hands the waiting lines to sonic-boom, in pieces that fit a pipe's atomic write. */
  function handOver(): void {
    if (waiting.length === 0) return;
    const lines = waiting.length === 1 ? waiting[0] : waiting.join('');
    const bytes = waitingBytes;
    waiting = [];
    waitingBytes = 0;
    if (pipe && bytes > maxWrite) {
      for (const piece of pieces(lines, maxWrite)) ok = write(piece);
    } else {
      ok = write(lines);
    }
  }

  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(flush, flushMs);
    // The timer never keeps the process alive: pino writes what waits at exit.
    timer.unref();
  };
  function flush(): void {
    timer = undefined;
    // During a write, sonic-boom keeps what it is handed and writes it next.
    if (!state.destroyed) handOver();
  }
  stream.write = (lines: string) => {
    // A closed destination answers as sonic-boom does.
    if (state.destroyed) return write(lines);
    waiting.push(lines);
    waitingBytes += Buffer.byteLength(lines);
    if (waitingBytes >= chunkBytes) handOver();
    if (timer === undefined) arm();
    return ok;
  };
  // pino's logger.flush(callback): what waits here is written, and the
  // callback told once it is (sonic-boom, given whole chunks, would call it at once).
  const ownFlush = stream.flush.bind(stream);
  stream.flush = (callback?: (err?: Error) => unknown) => {
    if (state.destroyed) return ownFlush(callback);
    // A file still being opened: its lines are written once it is, and the flush then.
    if (state.fd < 0) {
      stream.once('ready', () => stream.flush(callback));
      return;
    }
    handOver();
    if (callback === undefined) return;
    if (state._writing) stream.once('drain', () => callback());
    else process.nextTick(callback);
  };
  const ownEnd = stream.end.bind(stream);
  stream.end = () => {
    handOver();
    ownEnd();
  };
  const ownFlushSync = stream.flushSync.bind(stream);
  stream.flushSync = () => {
    // A file never opened (still opening at exit, or refused) takes nothing.
    if (state.fd < 0) return;
    handOver();
    // Another sonic-boom may keep its lines otherwise: then its own flush it is.
    // The chunk last written is a Buffer once a write has been made, a string before.
    const writing = state._writingBuf;
    if (Array.isArray(state._bufs) && (typeof writing === 'string' || Buffer.isBuffer(writing))) flushPendingSync(state);
    else ownFlushSync();
  };
  return stream;
}

/** What sonic-boom (utf8 mode) holds of the lines not yet written. */
interface PendingLines {
  fd: number;
  destroyed: boolean;
  _writing: boolean;
  _writingBuf: string | Buffer;
  _bufs: string[];
  _len: number;
}

/** How many times a full pipe (EAGAIN) is waited for at exit, 10 ms each, before the lines left are dropped. */
const EXIT_WRITE_RETRIES = 100;

/**
 * Writes what waits, at exit (pino calls it from its `exit` hook). sonic-boom's
 * own flushSync retries every failed write but EAGAIN forever, 100 ms apart:
 * once the reader of standard output is gone (`gatehouse start | head`, a log
 * collector that died), a write fails with EPIPE and the process would never
 * end, deaf to any further signal. Here a write that fails otherwise than
 * EAGAIN drops the lines left, and a pipe that stays full is given up on.
 */
function flushPendingSync(s: PendingLines): void {
  if (s.destroyed || s.fd < 0) return;
  // A chunk under an async write is the write's: sonic-boom leaves it too.
  const chunks = s._writing ? s._bufs : [s._writingBuf, ...s._bufs];
  s._bufs = [];
  if (!s._writing) s._writingBuf = '';
  s._len = 0;
  let retries = 0;
  for (const chunk of chunks) {
    let rest = Buffer.from(chunk);
    while (rest.length > 0) {
      try {
        rest = rest.subarray(writeSync(s.fd, rest));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++retries > EXIT_WRITE_RETRIES) return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
  }
}

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

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** Builds a logger; an unknown level is an error, so that a typo in `LOG_LEVEL` is seen at start. */
export function createLogger(options: LoggerOptions = {}): Logger {
  // A variable set empty (`LOG_LEVEL=${LOG_LEVEL}` in a compose file) is unset, as HOST or PORT are.
  const level = (options.level ?? (process.env.LOG_LEVEL?.trim() || 'info')).trim().toLowerCase();
  if (!LEVELS.has(level)) {
    throw new Error(`unknown log level '${level}'; use one of ${[...LEVELS].join(', ')}`);
  }
  const logger = pino(
    {
      name: options.name ?? 'gatehouse',
      level,
      redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
      timestamp: isoTimeOncePerMs(),
    },
    (options.destination as DestinationStream | undefined) ?? logDestination(),
  );
  return markPlainLogger(logger);
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

/**
 * Logs, as {@link logUnexpectedError} does, every error of status 500 or more
 * that `app` emits: a module's error handler answers an unexpected error with
 * a bare 500 and emits it on `ctx.app`, which a silent app would drop with its
 * cause. Returns the logging function, for error handlers of its own.
 */
export function logAppErrors(app: Koa, logger: Logger): (err: unknown, ctx: { method: string; path: string; state: Record<string, unknown> }) => void {
  const logUnexpected = logUnexpectedError(logger);
  app.on('error', (err: unknown, ctx: Koa.Context) => {
    if (statusOf(err) >= 500) logUnexpected(err, ctx);
  });
  return logUnexpected;
}
