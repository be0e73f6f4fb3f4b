import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { optionsTable } from '../../src/gatehouse/options';
import { REPO_ROOT } from '../support/process';

describe('the table of options in docs/operations.md', () => {
  it('is the one their declarations write (node --import tsx scripts/options-table.ts writes it)', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
    const table = /<!-- options: written by scripts\/options-table\.ts -->\n([^]*?)\n<!-- options: end -->/.exec(page);
    assert.ok(table, 'docs/operations.md has its markers');
    assert.equal(table[1], optionsTable());
  });
});
