/**
 * @module test/support/memory-logger
 * A logger that keeps what it is told, for assertions and quiet test output:
 * it fits every logger option of the services (auth, rate limits, stages).
 */

/** One line a {@link MemoryLogger} was given. */
export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

/** A logger that keeps its lines. */
export interface MemoryLogger {
  readonly lines: LogLine[];
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  /** Every line, as one string: for a failing assertion's message, or to look for a secret. */
  text(): string;
}

/** A logger that keeps what it is told. */
export function memoryLogger(): MemoryLogger {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (obj: object, msg: string) => void lines.push({ level, obj, msg });
  return {
    lines,
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () => lines.map((l) => `${l.level} ${JSON.stringify(l.obj)} ${l.msg}`).join('\n'),
  };
}
