/**
 * @module gatehouse/version
 * The version of the package this code is part of, read from its
 * package.json (two folders up from src/ and from dist/ alike).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The package's version, as its package.json gives it. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
}
