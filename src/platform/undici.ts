/**
 * @module platform/undici
 * What Gatehouse reads of undici beyond its API: the WebAssembly of its
 * HTTP/1.1 parser (llhttp), which undici compiles as it opens its first
 * connection, with SIMD where V8 has it and without where it does not.
 * platform/v8-wasm compiles both before PGlite's module, so that V8 keeps
 * optimising the parser afterwards. Written against undici 7.30.2 (pinned
 * in package.json); test/platform/undici.scenario.test.ts fails, naming the
 * version, when a release compiles other bytes or the parser is no longer
 * optimised.
 */

/** The undici release this file was written against. */
export const UNDICI_VERSION = '7.30.2';

/** The bytes of undici's HTTP/1.1 parser, with SIMD and without, as undici compiles them. */
export function undiciParserWasm(): Uint8Array[] {
  return [
    require('undici/lib/llhttp/llhttp_simd-wasm.js') as Uint8Array,
    require('undici/lib/llhttp/llhttp-wasm.js') as Uint8Array,
  ];
}
