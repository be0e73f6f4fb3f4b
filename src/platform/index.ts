/**
 * @module platform
 * Every read of another package's private state, or of the runtime's
 * undocumented behaviour, that Gatehouse relies on: one file per
 * dependency, each naming the version it was written against and each
 * checked by a test under test/platform that fails, naming the dependency
 * and its version, when a release changes what it relies on. The rest of
 * the source uses these named functions, never the fields themselves.
 */
export {
  baseCallProgress,
  GRPC_JS_VERSION,
  grpcJs,
  http2StreamOf,
  interceptingCallOf,
  onGrpcJsLoaded,
  type BaseCallProgress,
} from './grpc-js';
export {
  bodyExplicitlyNull,
  forgetExplicitStatus,
  handleRequestsWith,
  isKoaStream,
  KOA_VERSION,
  koaAccessor,
  queryCacheOf,
  setSelfWatchingBody,
  type KoaAccessor,
  type RequestHandling,
} from './koa';
export {
  KOA_ROUTER_VERSION,
  layerCaptures,
  layerName,
  layerParams,
  routerPathOption,
  routerTakesHost,
  runsMostSpecificOnly,
} from './koa-router';
export {
  closeLeavingIdleConnections,
  destroyKeepingSocket,
  NODE_HTTP_WRITTEN_FOR,
  responseInFlight,
  watchBodyAsParsed,
} from './node-http';
export { NODE_BUFFER_WRITTEN_FOR, utf8Text } from './node-buffer';
export { askClientCertificate, askEveryClient, NODE_TLS_WRITTEN_FOR, sniConnection } from './node-tls';
export { hookFsync, PGLITE_VERSION, startParamsWithFsync, type EmscriptenOptions } from './pglite';
export { compiledBaselineOnly, wasmFlagsGiven } from './v8-wasm';
export { undiciParserWasm, UNDICI_VERSION } from './undici';
export {
  holdYoungGeneration,
  keepYoungGenerationAt,
  releaseYoungGeneration,
  scavengeFlagsGiven,
  scavengeInParallel,
  youngGenerationBytes,
  youngGenerationFlagsGiven,
} from './v8-young';
export { histogramObserver, PROM_CLIENT_VERSION } from './prom-client';
export { loggerBindingsText, loggerDestination, loggerTimeField, PINO_VERSION } from './pino';
export {
  RE2JS_VERSION,
  searchAutomaton,
  wholeTextAutomaton,
  type Re2jsAutomaton,
  type Re2jsSearchAutomaton,
  type Re2jsState,
} from './re2js';
