/**
 * @module test/support/credentials
 * Users and their credentials: HTTP Basic headers, the demo user alice,
 * bcrypt hashes quick to make, and users files in a temporary folder.
 */
import bcrypt from 'bcryptjs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The `Authorization` value of HTTP Basic credentials: `Basic base64(user:password)`. */
export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/** The demo user alice, with her password. */
export const ALICE = basic('alice', 'wonderland');

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
