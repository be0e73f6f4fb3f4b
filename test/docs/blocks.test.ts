/**
 * @module test/docs/blocks
 * The docs hold no example the suite does not run, and no link to a page or
 * a heading that is not there.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { REPO_ROOT } from '../support/process';
import { allBlocks, documents, where, type Block } from '../support/doc-blocks';

/** Each kind of example, `<lang> <kind>`, and what runs it. */
const RUN_BY: Readonly<Record<string, string>> = {
  'sh commands': 'test/docs/commands.scenario.test.ts',
  'text start-line': 'test/docs/commands.scenario.test.ts',
  'console cli': 'test/docs/commands.scenario.test.ts',
  'sh split': 'test/docs/commands.scenario.test.ts',
  'sh postgres': 'test/docs/commands.scenario.test.ts',
  'sh tour': 'test/docs/tour.scenario.test.ts',
  'sh grpcurl': 'test/docs/tour.scenario.test.ts',
  'yaml record': 'test/docs/records.test.ts',
  'yaml mapping': 'test/docs/records.test.ts',
  'yaml limits': 'test/docs/records.test.ts',
  'ts ': 'test/index.scenario.test.ts',
  'sh try-installs': 'scripts/try-installs.js',
};

function kindOf(block: Block): string {
  // A file an example writes is run by the console example after it.
  if (block.attributes.file !== undefined) return 'file';
  return `${block.lang} ${block.kind}`;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

describe('the docs', () => {
  it('hold only examples the suite runs, each of a kind it knows', () => {
    const unknown = allBlocks()
      .filter((b) => kindOf(b) !== 'file' && RUN_BY[kindOf(b)] === undefined)
      .map((b) => `${where(b)}: \`\`\`${b.lang} ${b.kind}`);
    assert.deepEqual(unknown, []);
    for (const runner of new Set(Object.values(RUN_BY))) assert.ok(existsSync(join(REPO_ROOT, runner)), runner);
  });

  it('write each file for a console example that follows it on its page', () => {
    const blocks = allBlocks();
    for (const block of blocks.filter((b) => b.attributes.file !== undefined)) {
      const next = blocks
        .slice(blocks.indexOf(block) + 1)
        .find((b) => b.file === block.file && b.attributes.file === undefined);
      assert.ok(
        next && ['console cli', 'sh split'].includes(`${next.lang} ${next.kind}`),
        `${where(block)} writes ${block.attributes.file} for no console or server example`,
      );
    }
  });

  it('show the install commands that scripts/try-installs.js runs, each install path and the start after it', () => {
    const script = require(join(REPO_ROOT, 'scripts', 'try-installs.js')) as {
      docsCommands(): { installs: Record<string, string>; then: string[] };
    };
    const { installs, then } = script.docsCommands();
    assert.deepEqual(Object.keys(installs).sort(), ['folder', 'git', 'tarball']);
    assert.ok(then.includes('npx gatehouse start'), then.join('; '));
  });

  it('link to pages and headings that exist', () => {
    const broken: string[] = [];
    for (const doc of documents()) {
      const text = readFileSync(join(REPO_ROOT, doc), 'utf8').replace(/^ *```[^]*?^ *```$/gm, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [path, anchor] = target.split('#');
        const file = path === '' ? doc : normalize(join(dirname(doc), path));
        if (!existsSync(join(REPO_ROOT, file))) {
          broken.push(`${doc}: ${target}`);
          continue;
        }
        if (anchor === undefined || !file.endsWith('.md')) continue;
        const headings = [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
          anchorOf(m[1]),
        );
        if (!headings.includes(anchor)) broken.push(`${doc}: ${target}`);
      }
    }
    assert.deepEqual(broken, []);
  });
});
