/**
 * @module platform/v8-wasm
 * How V8 compiles a WebAssembly module: by default lazily, each function
 * with its baseline compiler (Liftoff) when first called, then again with
 * its optimising compiler (TurboFan) once it is hot. For PGlite's 9 MB
 * module, the optimising compiles on V8's background threads leave tens of
 * MB resident for the life of the process. V8 has no per-module choice:
 * its flags, changed while one module compiles (`v8.setFlagsFromString`,
 * process-wide), decide how that module is compiled, and are put back
 * once it is, so that what compiles later (undici's HTTP parser) is
 * compiled as before. `--liftoff-only` turns V8's tiering flags off as it
 * is set, and V8 11 and 12 (Node 20, 22) do not turn them on again when it
 * is unset: they are put back by name. V8 13 (Node 24) reads the flag
 * when it would optimise a function, so there the module compiled under
 * it is optimised once it is put back. Written against the V8 of Node 20
 * to 24; test/platform/v8-wasm checks both.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeFlagGiven } from './node-flags';

/** The V8 flag compiling a module with the baseline compiler only. */
const BASELINE_ONLY = '--liftoff-only';
/** V8's defaults for it and for the two tiering flags it implies off. */
const DEFAULTS = '--no-liftoff-only --wasm-tier-up --wasm-dynamic-tiering';

/** Whether the process was started with a flag of its own for these (`node --liftoff-only`, NODE_OPTIONS): it is left alone then. */
export function wasmFlagsGiven(execArgv: readonly string[] = process.execArgv, env = process.env): boolean {
  return nodeFlagGiven(/^--(no-)?(liftoff|wasm-lazy-compilation|wasm-dynamic-tiering|wasm-tier-up)/, execArgv, env);
}

/**
 * Runs `compile` (which compiles and instantiates a WebAssembly module)
 * with V8 compiling its functions with the baseline compiler only: those
 * it calls later too, lazily, as V8 compiles them, are never optimised. The
 * flag is put back when it settles. Another module compiled meanwhile, on
 * any thread, is compiled the same way.
 */
export async function compiledBaselineOnly<T>(compile: () => Promise<T>): Promise<T> {
  setFlagsFromString(BASELINE_ONLY);
  try {
    return await compile();
  } finally {
    setFlagsFromString(DEFAULTS);
  }
}
