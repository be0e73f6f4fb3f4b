/**
 * @module platform/v8-wasm
 * How V8 compiles a WebAssembly module: by default lazily, each function
 * with its baseline compiler (Liftoff) when first called, then again with
 * its optimising compiler (TurboFan) once it is hot. For PGlite's 9 MB
 * module, the optimising compiles on V8's background threads leave tens of
 * MB resident for the life of the process. V8 has no per-module choice:
 * its flags (`v8.setFlagsFromString`, process-wide) decide. `--liftoff-only`
 * turns V8's tiering flags off as it is set, and V8 11 and 12 (Node 20,
 * 22) leave them off when it is unset: what compiles afterwards, on any
 * thread, is never optimised either, PGlite's functions first called later
 * included. That is what keeps PGlite lean, and it is kept. A module whose
 * bytes V8 compiled before keeps its tiering: V8 hands a module of the same
 * bytes the code compiled then, so a module that must stay fast (undici's
 * HTTP parser) is compiled first and held. V8 13 (Node 24) reads the flag
 * when it would optimise, so there PGlite's module is optimised once it is
 * unset. Written against the V8 of Node 20 to 24; test/platform/v8-wasm
 * and test/platform/undici check it.
 */
import { setFlagsFromString } from 'node:v8';
import { nodeFlagGiven } from './node-flags';

/** The V8 flag compiling a module with the baseline compiler only, and its default. */
const BASELINE_ONLY = '--liftoff-only';
const DEFAULT = '--no-liftoff-only';

/** The WebAssembly global, as far as it is used here: the build has no DOM types. */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object };

/** Modules compiled before the flag was set, held so that V8 keeps their code for a module of the same bytes. */
const heldModules: object[] = [];

/** Whether the process was started with a flag of its own for these (`node --liftoff-only`, NODE_OPTIONS): it is left alone then. */
export function wasmFlagsGiven(execArgv: readonly string[] = process.execArgv, env = process.env): boolean {
  return nodeFlagGiven(/^--(no-)?(liftoff|wasm-lazy-compilation|wasm-dynamic-tiering|wasm-tier-up)/, execArgv, env);
}

/**
 * Runs `compile` (which compiles and instantiates a WebAssembly module)
 * with V8 compiling its functions with the baseline compiler only: those
 * it calls later too, lazily, as V8 compiles them, are never optimised, nor
 * (Node 20, 22) any module compiled later. `keepTiering` are compiled
 * first, with V8's tiering as it is, and held for the life of the thread:
 * a module of the same bytes compiled later, on any thread, is optimised
 * as usual. Bytes this V8 cannot compile are left out.
 */
export async function compiledBaselineOnly<T>(
  compile: () => Promise<T>,
  keepTiering: readonly Uint8Array[] = [],
): Promise<T> {
  for (const bytes of keepTiering) {
    try {
      heldModules.push(new WebAssembly.Module(bytes));
    } catch {
      // Such as SIMD where V8 has none: whoever compiles these bytes later fails as well, and falls back.
    }
  }
  setFlagsFromString(BASELINE_ONLY);
  try {
    return await compile();
  } finally {
    setFlagsFromString(DEFAULT);
  }
}
