/**
 * @module test/platform/v8-young
 * What src/platform/v8-young relies on in the V8 of the Node running the
 * tests: the semi-space growth factor, set while the process runs, is read
 * each time a scavenge would grow the young generation, and
 * `--parallel-scavenge`, set while it runs, at each scavenge. Run in a
 * process of its own, whose heap nothing else shares.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { relies } from '../support/reliance';

const MODULE = join(__dirname, '..', '..', 'src', 'platform', 'v8-young.ts');

/**
 * A script's start: V8's young generation module, and `churn(rounds)`,
 * allocating in rounds objects that survive a while. It yields after every
 * round, as a server does between requests, so that what observes the
 * collections runs between two of them.
 */
const PRELUDE = `
const young = require(${JSON.stringify(MODULE)});
const churn = async (rounds) => {
  let keep = [];
  for (let i = 0; i < rounds; i++) {
    const batch = [];
    for (let j = 0; j < 5000; j++) batch.push({ j, s: 'x' + j });
    keep.push(batch);
    if (keep.length > 40) keep.shift();
    await new Promise((resolve) => setImmediate(resolve));
  }
};
`;

/** Allocates in rounds, and says the young generation's size after each step. */
const SCRIPT = `
${PRELUDE}
(async () => {
  const start = young.youngGenerationBytes();
  young.holdYoungGeneration();
  await churn(300);
  const held = young.youngGenerationBytes();
  const stopKeeping = young.keepYoungGenerationAt(2 * start + 1);
  await churn(300);
  await churn(300);
  const after = young.youngGenerationBytes();
  stopKeeping();
  young.releaseYoungGeneration();
  await churn(300);
  console.log(JSON.stringify({ start, held, after, released: young.youngGenerationBytes() }));
})();
`;

describe("platform/v8-young: what Gatehouse relies on in V8's young generation", () => {
  it('does not grow it while the growth factor is 1, grows it to about a size asked, and lets it grow again at 2', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', SCRIPT], { encoding: 'utf8' });
    const { start, held, after, released } = JSON.parse(out) as Record<string, number>;
    const asked = 2 * start + 1;
    const sizes = `start ${start}, held ${held}, asked ${asked}, after ${after}, released ${released}`;
    const rely = (what: string, holds: boolean) => relies('node', 'v20 to v24', what, holds, sizes);
    // V8 13 (Node 24) sizes it by pages as well as by the factor: bounds, not exact sizes.
    rely('keeps the young generation from doubling while the growth factor is 1', held < 2 * start);
    rely('grows it to the size asked, and not past the next doubling', after >= asked && after <= 2 * asked);
    rely('grows it past that once the growth factor is 2 again', released > after);
  });

  it('grows it back to the size asked after a collection that reduces memory shrank it', function () {
    // V8 11 (Node 20) shrinks it only at a collection that finds the thread allocated little for seconds: no collection asks it at once.
    if (Number(process.versions.node.split('.')[0]) < 22) this.skip();
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '-e', SHRUNK], { encoding: 'utf8' });
    const { asked, kept, shrunk, regrown } = JSON.parse(out) as Record<string, number>;
    const sizes = `asked ${asked}, kept ${kept}, shrunk ${shrunk}, regrown ${regrown}`;
    relies('node', 'v22 to v24', 'shrinks the young generation at a last-resort collection', shrunk < kept, sizes);
    assert.ok(kept >= asked && regrown >= asked, `the young generation was not kept at the size asked: ${sizes}`);
  });

  it('scavenges with its helper threads by default, and on the allocating thread alone once parallel scavenges are off', () => {
    // A young generation of 16 MiB from the start, so that V8 splits each scavenge into several tasks.
    const args = ['--min-semi-space-size=16', '--trace-gc-nvp', '--import', 'tsx', '-e', SCAVENGES];
    const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
    const [before, after] = out.split(SWITCHED).map(backgroundScavenging);
    const times = `helpers' scavenging before ${before.ms} ms in ${before.scavenges} scavenges, after ${after.ms} ms in ${after.scavenges}`;
    const rely = (what: string, holds: boolean) => relies('node', 'v20 to v24', what, holds, times);
    rely('traces each scavenge with --trace-gc-nvp', before.scavenges >= 3 && after.scavenges >= 3);
    rely('scavenges with its helper threads by default', before.ms > 0);
    rely('scavenges on the allocating thread alone after --no-parallel-scavenge', after.ms === 0);
  });
});

/** Keeps the young generation at twice its size, lets V8 shrink it as it does after an idle spell, and allocates again. */
const SHRUNK = `
${PRELUDE}
(async () => {
  const asked = 2 * young.youngGenerationBytes() + 1;
  young.holdYoungGeneration();
  young.keepYoungGenerationAt(asked);
  await churn(600);
  const kept = young.youngGenerationBytes();
  gc({ type: 'major', flavor: 'last-resort' });
  const shrunk = young.youngGenerationBytes();
  await churn(600);
  console.log(JSON.stringify({ asked, kept, shrunk, regrown: young.youngGenerationBytes() }));
})();
`;

/** The line the script below writes between its two halves. */
const SWITCHED = 'parallel scavenges off';

/** Allocates objects that survive a while, turns parallel scavenges off, and allocates as much again. */
const SCAVENGES = `
${PRELUDE}
(async () => {
  await churn(1200);
  console.log(${JSON.stringify(SWITCHED)});
  young.scavengeInParallel(false);
  await churn(1200);
})();
`;

/** The scavenges traced in `text` (--trace-gc-nvp), and the time V8's helper threads spent in them. */
function backgroundScavenging(text: string): { scavenges: number; ms: number } {
  let scavenges = 0;
  let ms = 0;
  for (const line of text.split('\n')) {
    if (!/\bgc=s\b/.test(line)) continue;
    scavenges++;
    ms += Number(/\bbackground\.scavenge\.parallel=([\d.]+)/.exec(line)?.[1] ?? 'NaN');
  }
  return { scavenges, ms };
}
