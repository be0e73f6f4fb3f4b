/**
 * @module test/auth/support
 * Shared pieces of the auth tests: users files in a temporary folder, Basic
 * headers, and a logger that keeps every line it is given.
 */
import bcrypt from 'bcryptjs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthLogger } from '../../src/auth';

/** `Basic base64(user:password)`. */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/** A bcrypt hash at the lowest cost, so tests stay quick. */
export function quickHash(password: string, version: '2a' | '2b' | '2y' = '2y'): string {
  return bcrypt.hashSync(password, 4).replace(/^\$2b\$/, `$${version}$`);
}

/** A temporary folder holding users files; `remove()` it in `after`. */
export function usersFolder(): { dir: string; write(name: string, text: string): string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-auth-'));
  return {
    dir,
    write(name, text) {
      const file = join(dir, name);
      writeFileSync(file, text);
      return file;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

/** A logger that keeps what it is told; `text()` is everything, as one string. */
export function captureLogger(): AuthLogger & { lines: LogLine[]; text(): string } {
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
