/**
 * @module test/support/config-folder
 * Config folders for tests: the demo folder `npm start` uses, and a
 * temporary copy of it to change at will, written as editors write.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The demo config folder, as `npm start` uses it. */
export const DEMO_CONFIG = join(__dirname, '..', '..', 'config');

/** A config folder of a test's own, removed by `remove()`. */
export interface TempConfig {
  readonly dir: string;
  /** The text of a file of the folder. */
  read(name: string): string;
  /** Replaces a file whole, as editors do: written aside, then renamed over it (its folder made if need be). */
  write(name: string, text: string): void;
  /** Deletes a file of the folder. */
  unlink(name: string): void;
  remove(): void;
}

/** Copies the demo config (or `from`) into a fresh temporary folder. */
export function copyConfig(from: string = DEMO_CONFIG): TempConfig {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
  cpSync(from, dir, { recursive: true });
  let n = 0;
  return {
    dir,
    read: (name) => readFileSync(join(dir, name), 'utf8'),
    write(name, text) {
      // Outside the folder, so that the watcher sees only the rename.
      const aside = join(tmpdir(), `gatehouse-write-${process.pid}-${n++}`);
      writeFileSync(aside, text);
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      renameSync(aside, join(dir, name));
    },
    unlink: (name) => unlinkSync(join(dir, name)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
