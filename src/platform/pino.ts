/**
 * @module platform/pino
 * What Gatehouse reads of a pino logger's own state, through the symbols
 * pino exports for it (`pino.symbols`, for integrations, not its API): the
 * destination it writes to, its time field, and the text of its bindings.
 * With them an access line is written as pino would write it, without
 * pino's work for each line. Written against pino 10.4.0 (pinned in
 * package.json); test/platform/pino.test.ts fails, naming the version, when
 * a release changes any of it.
 */
import pino, { type Logger } from 'pino';

/** The pino release these functions were written against. */
export const PINO_VERSION = '10.4.0';

type LoggerFields = Record<symbol, unknown>;

/** The destination `logger` writes its lines to. */
export function loggerDestination(logger: Logger): { write(chunk: string): unknown } {
  return (logger as unknown as LoggerFields)[pino.symbols.streamSym] as { write(chunk: string): unknown };
}

/** The function that makes the `,"time":...` field of each of `logger`'s lines. */
export function loggerTimeField(logger: Logger): () => string {
  return (logger as unknown as LoggerFields)[pino.symbols.timeSym] as () => string;
}

/** What `logger` puts after the time on every line: `,"pid":…,"hostname":…,"name":…` and its bindings. */
export function loggerBindingsText(logger: Logger): string {
  return (logger as unknown as LoggerFields)[pino.symbols.chindingsSym] as string;
}
