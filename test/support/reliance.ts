/**
 * @module test/support/reliance
 * How a test of src/platform says that a dependency changed what Gatehouse
 * relies on: an assertion whose message names the dependency, the version
 * installed and the version the code was written against, so that a
 * failure after an upgrade says at once where to look.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The version of package `name` as installed (its package.json, found above its main file when not exported). */
export function installedVersion(name: string): string {
  for (let dir = dirname(require.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === name && pkg.version) return pkg.version;
  }
  throw new Error(`${name} is not installed`);
}

/** Fails, naming `dependency` as installed and `writtenFor`, unless `holds`. */
export function relies(dependency: string, writtenFor: string, what: string, holds: boolean, detail = ''): void {
  const installed = dependency === 'node' ? process.version : `${dependency}@${installedVersion(dependency)}`;
  assert.ok(
    holds,
    `${installed} (src/platform was written against ${dependency} ${writtenFor}) no longer ${what}${detail ? `: ${detail}` : ''}`,
  );
}

/** Fails, as {@link relies} does, when the version installed is not the one the code was written against. */
export function pinnedAt(dependency: string, writtenFor: string): void {
  const installed = installedVersion(dependency);
  assert.equal(
    installed,
    writtenFor,
    `${dependency}@${installed} is installed, and src/platform was written against ${writtenFor}: check what it relies on (test/platform), then change the version there and in package.json`,
  );
}
