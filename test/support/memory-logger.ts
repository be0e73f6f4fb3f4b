/**
 * @module test/support/memory-logger
 * A logger that keeps what it is told, for assertions and quiet test output.
 */
export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

export function memoryLogger(): {
  lines: LogLine[];
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
} {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
  };
}
