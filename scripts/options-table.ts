/**
 * Writes the table of options in docs/operations.md from their declarations
 * (src/gatehouse/options/declarations.ts), between its two markers:
 * `node --import tsx scripts/options-table.ts`. test/docs/options-table
 * fails while the page and the declarations differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { optionsTable } from '../src/gatehouse/options';

const PAGE = join(__dirname, '..', 'docs', 'operations.md');
const START = '<!-- options: written by scripts/options-table.ts -->';
const END = '<!-- options: end -->';

const page = readFileSync(PAGE, 'utf8');
const from = page.indexOf(START);
const to = page.indexOf(END);
if (from === -1 || to < from) throw new Error(`${PAGE} has no ${START} ... ${END}`);
writeFileSync(PAGE, `${page.slice(0, from + START.length)}\n${optionsTable()}\n${page.slice(to)}`);
