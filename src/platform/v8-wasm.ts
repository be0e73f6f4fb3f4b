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
 * compiled as before. Written against the V8 of Node 20 to 24.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeFlagGiven } from './node-flags';

/** The V8 flag compiling a module with the baseline compiler only, and V8's default. */
const BASELINE_ONLY = '--liftoff-only';
const DEFAULT = '--no-liftoff-only';

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
    setFlagsFromString(DEFAULT);
  }
}
