import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { assertBuilt, REPO_ROOT } from '../support/process';

const run = promisify(execFile);

/**
 * Loaded before the CLI: once its main module has run, makes objects that
 * all outlive young collections (which V8 answers by pretenuring their
 * allocation sites) and exits before the command does anything else.
 */
const LONG_LIVED_SITES = `
setImmediate(() => {
  // V8 decides to pretenure only in a young collection at its largest young generation: it is grown first.
  const grown = [];
  for (let i = 0; i < 1000000; i++) grown.push([i]);
  const make = (i) => ({ a: i, b: [i, i + 1], c: { d: i } });
  const kept = [];
  for (let i = 0; i < 300000; i++) kept.push(make(i));
  process.exit(kept.length > 0 && grown.length > 0 ? 0 : 1);
});
`;

/** The allocation sites V8 decided to pretenure in a `gatehouse <args>` process, as its statistics trace says. */
async function sitesTenured(args: string[], nodeFlags: string[] = []): Promise<number> {
  const { stdout } = await run(
    process.execPath,
    ['--trace-pretenuring-statistics', ...nodeFlags, '--require', PRELOAD, join(REPO_ROOT, 'dist', 'cli', 'main.js'), ...args],
    { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout.split('\n').filter((line) => line.includes('=> tenure')).length;
}

let dir: string;
let PRELOAD: string;

describe('the gatehouse process and V8 pretenuring', () => {
  before(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-heap-'));
    PRELOAD = join(dir, 'long-lived-sites.js');
    writeFileSync(PRELOAD, LONG_LIVED_SITES);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('pretenures nothing in a server command, however long what it allocates lives', async () => {
    assert.equal(await sitesTenured(['start', '--port', '0', '--grpc-port', '0', '--data', join(dir, 'data')]), 0);
    assert.equal(await sitesTenured(['serve', 'api', '--port', '0']), 0);
  });

  it('leaves V8 as it is for a command that ends, where pretenuring is seen at work', async () => {
    assert.ok((await sitesTenured(['--version'])) > 0, 'V8 pretenures the long-lived sites of a process left alone');
  });

  it('keeps pretenuring on when the node command line asks for it', async () => {
    assert.ok((await sitesTenured(['start', '--port', '0', '--grpc-port', '0', '--data', join(dir, 'data')], ['--allocation-site-pretenuring'])) > 0);
  });
});
