/**
 * @module platform/grpc-js
 * What Gatehouse reads of grpc-js's server calls beyond its interceptor API,
 * to bound calls whose request has not fully arrived: the HTTP/2 stream
 * under a call (only it can be reset), whether the client half-closed and
 * whether metadata was sent, and the call a handler's call object was made
 * for. Written against @grpc/grpc-js 1.14.7 (pinned in package.json);
 * test/platform/grpc-js.test.ts fails, naming the version, when a release
 * changes any of it. Where a field is missing, these answer undefined, and
 * the caller falls back to the interceptor API.
 *
 * grpc-js itself (with protobufjs, which its proto loader brings) is loaded
 * at its first use, through {@link grpcJs}: a gateway answers HTTP before
 * it has any gRPC to do, and one with no gRPC port and no gRPC service
 * never loads it.
 */
import type * as http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';

/** The grpc-js release these functions were written against. */
export const GRPC_JS_VERSION = '1.14.7';

type GrpcJs = typeof import('@grpc/grpc-js');

let loaded: GrpcJs | undefined;
const whenLoaded: ((grpcJs: GrpcJs) => void)[] = [];

/** grpc-js, loaded at the first call; each {@link onGrpcJsLoaded} is run on it then. */
export function grpcJs(): GrpcJs {
  if (loaded !== undefined) return loaded;
  loaded = require('@grpc/grpc-js') as GrpcJs;
  for (const run of whenLoaded.splice(0)) run(loaded);
  return loaded;
}

/** Runs `run` on grpc-js once {@link grpcJs} has loaded it: at once if it has. */
export function onGrpcJsLoaded(run: (grpcJs: GrpcJs) => void): void {
  if (loaded !== undefined) run(loaded);
  else whenLoaded.push(run);
}

/** The HTTP/2 stream under grpc-js's own server call (its `stream`), if it has one. */
export function http2StreamOf(call: grpc.ServerInterceptingCallInterface): http2.ServerHttp2Stream | undefined {
  const stream = (call as unknown as { stream?: unknown }).stream;
  return stream instanceof Object &&
    typeof (stream as http2.ServerHttp2Stream).close === 'function' &&
    'rstCode' in stream
    ? (stream as http2.ServerHttp2Stream)
    : undefined;
}

/** What grpc-js's own server call records of a call's progress. */
export interface BaseCallProgress {
  /** The client has half-closed: a unary request is whole. */
  readonly receivedHalfClose: boolean;
  /** The response's metadata has gone out. */
  readonly metadataSent: boolean;
}

/** `call` as grpc-js's own server call, whose progress can be read; undefined for any other. */
export function baseCallProgress(
  call: grpc.ServerInterceptingCallInterface,
): (grpc.ServerInterceptingCallInterface & BaseCallProgress) | undefined {
  const c = call as Partial<BaseCallProgress>;
  return typeof c.receivedHalfClose === 'boolean' && typeof c.metadataSent === 'boolean'
    ? (call as grpc.ServerInterceptingCallInterface & BaseCallProgress)
    : undefined;
}

/**
 * The intercepting call a handler's call object (a ServerUnaryCall, a
 * ServerWritableStream) was made for: grpc-js keeps it as `call`.
 */
export function interceptingCallOf(handlerCall: object): object | undefined {
  const call = (handlerCall as { call?: unknown }).call;
  return typeof call === 'object' && call !== null ? call : undefined;
}
