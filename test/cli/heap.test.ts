import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../support/process';

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
async function sitesTenured(args: string[], nodeArgs: string[] = []): Promise<number> {
  const result = await runCli(args, {
    nodeArgs: ['--trace-pretenuring-statistics', ...nodeArgs, '--require', preload],
  });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.split('\n').filter((line) => line.includes('=> tenure')).length;
}

const START = ['start', '--port', '0', '--grpc-port', '0'];

let dir: string;
let preload: string;

describe('the gatehouse process and V8 pretenuring', () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-heap-'));
    preload = join(dir, 'long-lived-sites.js');
    writeFileSync(preload, LONG_LIVED_SITES);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('pretenures nothing in a server command, however long what it allocates lives', async () => {
    assert.equal(await sitesTenured(START), 0);
    assert.equal(await sitesTenured(['serve', 'api', '--port', '0']), 0);
  });

  it('leaves V8 as it is for a command that ends, where pretenuring is seen at work', async () => {
    assert.ok((await sitesTenured(['--version'])) > 0, 'V8 pretenures the long-lived sites of a process left alone');
  });

  it('keeps pretenuring on when the node command line asks for it', async () => {
    assert.ok((await sitesTenured(START, ['--allocation-site-pretenuring'])) > 0);
  });
});
