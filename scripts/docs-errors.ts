/**
 * @module scripts/docs-errors
 * `npm run docs:errors`: writes the list of every error in docs/api.md
 * from the registry (src/errors), between its markers. A test fails when
 * the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withErrorTable } from '../src/errors/table';

const file = join(__dirname, '..', 'docs', 'api.md');
const doc = readFileSync(file, 'utf8');
const written = withErrorTable(doc);
if (written === doc) {
  console.log('docs/api.md lists the errors of the registry already');
} else {
  writeFileSync(file, written);
  console.log('docs/api.md: the list of errors written from the registry');
}
