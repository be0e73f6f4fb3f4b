/**
 * @module test/platform/v8-wasm
 * What src/platform/v8-wasm relies on in the V8 of the Node running the
 * tests: a module compiled inside `compiledBaselineOnly` runs on the
 * baseline compiler (Liftoff), its functions first called afterwards
 * included; and a module whose bytes it was given to keep, compiled again
 * afterwards, is optimised (TurboFan) once hot. Run in a process of its
 * own, with V8's test functions, whose flags nothing else shares.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { relies } from '../support/reliance';

const MODULE = join(__dirname, '..', '..', 'src', 'platform', 'v8-wasm.ts');

/**
 * A WebAssembly module exporting one function, `sum(n)`: a loop adding n,
 * n - 1, ... 1. The byte at `NAME_AT` is the last letter of its export's
 * name, changed to make a second module: V8 shares the compiled code of
 * modules with the same bytes.
 */
const SUM_MODULE =
  '0061736d01000000' + // magic, version
  '01060160017f017f' + // one type: (i32) -> i32
  '03020100' + // one function of that type
  '0707010373756d0000' + // export "sum" as function 0
  '0a23012101017f' + // code: one body, one local i32
  '024003402000450d01200120006a2101200041016b21000c000b0b20010b'; // while n: acc += n, n -= 1
const NAME_AT = 24;

/** Compiles one module inside `compiledBaselineOnly`, keeping a second, compiles the second again after, runs both hot until it is optimised, and says which are. */
const SCRIPT = `
const { compiledBaselineOnly } = require(${JSON.stringify(MODULE)});
const bytes = Buffer.from('${SUM_MODULE}', 'hex');
const other = Buffer.from(bytes);
other[${NAME_AT}] = 0x6e;
const instantiate = (wire) => Object.values(new WebAssembly.Instance(new WebAssembly.Module(wire)).exports)[0];
(async () => {
  const inside = await compiledBaselineOnly(async () => instantiate(bytes), [Buffer.from(other)]);
  const kept = instantiate(other);
  let rounds = 0;
  // V8 optimises on its helper threads: the loop yields until it has, without a clock.
  while (!%IsTurboFanFunction(kept) && rounds < 2000) {
    for (let i = 0; i < 100; i++) inside(10000) + kept(10000);
    rounds++;
    await new Promise((resolve) => setImmediate(resolve));
  }
  console.log(JSON.stringify({ rounds, insideOptimised: %IsTurboFanFunction(inside), keptOptimised: %IsTurboFanFunction(kept) }));
})();
`;

describe("platform/v8-wasm: what Gatehouse relies on in V8's WebAssembly compilers", () => {
  it('keeps a module compiled inside compiledBaselineOnly on the baseline compiler where V8 allows, and optimises one it was given to keep', () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '-e', SCRIPT], {
      encoding: 'utf8',
    });
    const { rounds, insideOptimised, keptOptimised } = JSON.parse(out) as Record<string, number | boolean>;
    const seen = `after ${String(rounds)} rounds: inside optimised ${String(insideOptimised)}, kept ${String(keptOptimised)}`;
    relies(
      'node',
      'v20 to v24',
      'optimises a module whose bytes were compiled before --liftoff-only',
      keptOptimised === true,
      seen,
    );
    // V8 13 (Node 24) reads the flag as it would optimise, not as it compiles.
    const major = Number(process.versions.node.split('.')[0]);
    if (major < 24)
      relies(
        'node',
        'v20, v22',
        'keeps a module compiled under --liftoff-only on Liftoff',
        insideOptimised === false,
        seen,
      );
  });
});
