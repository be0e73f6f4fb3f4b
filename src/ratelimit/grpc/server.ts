/**
 * @module ratelimit/grpc/server
 * The rate-limit service's network face: plaintext gRPC serving
 * `pb.lyft.ratelimit.RateLimitService` and
 * `envoy.service.ratelimit.v3.RateLimitService` from one handler, server
 * reflection (v1alpha and v1) and `grpc.health.v1.Health`, on a port whose
 * connections and streams are bounded in number, in time and in what they
 * hold (see ./port).
 */
import type * as grpc from '@grpc/grpc-js';
import { grpcJs } from '../../platform';
import type { BoundPort } from '../../ports';
import { checkBound, DEFAULT_REQUEST_BOUNDS, type RequestBounds } from '../bounds';
import type { ProtoResponse } from './messages/codec';
import { createHealthRegistry, type HealthRegistry } from './health';
import { ENVOY_V3_SERVICE, HEALTH_SERVICE, LYFT_SERVICE, rateLimitProtos } from './protos';
import { addReflectionOnDemand } from './reflection-on-demand';
import { responseEncoder } from './messages/response-encoder';
import { listenForGrpc, type GrpcListener } from './port/connections';
import { boundIncompleteRequests } from './port/incomplete-requests';
import {
  HANDSHAKE_TIMEOUT_MS,
  IDLE_TIMEOUT_MS,
  KEEPALIVE_TIME_MS,
  MAX_CONCURRENT_STREAMS,
  MAX_CONNECTIONS,
  MAX_INCOMPLETE_REQUESTS,
  MAX_MESSAGE_BYTES,
  REQUEST_TIMEOUT_MS,
} from './port/port-bounds';
import { requestDecoder, type RequestShape } from './messages/request-decoder';
import { shouldRateLimitHandler } from './should-rate-limit';
import type { RateLimiter } from '../types';

export {
  HANDSHAKE_TIMEOUT_MS,
  IDLE_TIMEOUT_MS,
  KEEPALIVE_TIME_MS,
  MAX_CONCURRENT_STREAMS,
  MAX_CONNECTIONS,
  MAX_INCOMPLETE_REQUESTS,
  MAX_MESSAGE_BYTES,
  REQUEST_TIMEOUT_MS,
};

/** The service name envoyproxy/ratelimit registers its health status under. */
const ENVOYPROXY_HEALTH_NAME = 'ratelimit';

export interface RateLimitGrpcServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8081; 0 picks a free port. */
  port?: number;
  /** A port bound beforehand (see `bindPort`), which `start()` serves on instead of binding `host:port`. */
  bound?: BoundPort;
  /** How long `stop()` lets calls finish before cutting them, in ms. Default 5000. */
  shutdownGraceMs?: number;
  /**
   * Largest message a call may send, in bytes. Default
   * {@link MAX_MESSAGE_BYTES}. A longer one is refused with
   * RESOURCE_EXHAUSTED from its length, before it is read.
   */
  maxMessageBytes?: number;
  /**
   * Most calls (and health `Watch` streams) one connection may have open at
   * once; a client's further calls wait for one to end. Default
   * {@link MAX_CONCURRENT_STREAMS}.
   */
  maxConcurrentStreams?: number;
  /**
   * Most connections open at once; one more is closed as it comes. Default
   * {@link MAX_CONNECTIONS}.
   */
  maxConnections?: number;
  /**
   * How long a new connection may take to send the HTTP/2 preface and its
   * SETTINGS, in ms; it is closed past that. Default {@link HANDSHAKE_TIMEOUT_MS}.
   */
  handshakeTimeoutMs?: number;
  /**
   * How long a call's request may take to arrive whole (a streaming
   * request: each message, and its end), in ms; past it the call is answered
   * DEADLINE_EXCEEDED, its stream reset, and nothing counted. Default
   * {@link REQUEST_TIMEOUT_MS}.
   */
  requestTimeoutMs?: number;
  /**
   * Most calls, over every connection, whose request has not all arrived;
   * one more makes the one that waited longest end with RESOURCE_EXHAUSTED.
   * Their buffers are at most this times `maxMessageBytes`. Default
   * {@link MAX_INCOMPLETE_REQUESTS}.
   */
  maxIncompleteRequests?: number;
  /** How long a connection with no call open is kept, in ms (then a GOAWAY). Default {@link IDLE_TIMEOUT_MS}. */
  idleTimeoutMs?: number;
  /**
   * How often the server pings each connection, in ms; one whose peer does
   * not answer within 20 s is closed. Default {@link KEEPALIVE_TIME_MS}.
   */
  keepaliveTimeMs?: number;
}

export interface RateLimitGrpcServer {
  readonly server: grpc.Server;
  readonly health: HealthRegistry;
  /** The bound port once started (the asked one before). */
  readonly port: number;
  /** Binds and serves; resolves the port. */
  start(): Promise<number>;
  /**
   * Keeps serving, while health says NOT_SERVING (to `Check` and to every
   * `Watch`), so that clients that watch it go elsewhere before `stop()`.
   */
  drain(): void;
  /** Stops taking calls, finishes those running (cut after the grace period) and closes the port. */
  stop(): Promise<void>;
}

/**
 * A rate-limit service definition whose requests are read straight into the
 * service's typed request, as protobuf-go reads them, and refused past
 * `bounds` or where a string is not UTF-8 (see ./messages/request-decoder),
 * and whose answers are written without proto-loader's rebuilding of them
 * (see ./messages/response-encoder).
 */
function withRequestChecks(service: string, bounds: RequestBounds, shape: RequestShape): grpc.ServiceDefinition {
  const definition = rateLimitProtos()[service] as grpc.ServiceDefinition;
  const method = definition.ShouldRateLimit as grpc.MethodDefinition<unknown, ProtoResponse>;
  const requestDeserialize = requestDecoder(shape, bounds);
  const responseSerialize = responseEncoder(service, method.responseSerialize);
  return { ...definition, ShouldRateLimit: { ...method, requestDeserialize, responseSerialize } };
}

/** Serves a rate limiter (the in-process service, usually) over gRPC. */
export function createRateLimitGrpcServer(
  service: RateLimiter,
  options: RateLimitGrpcServerOptions = {},
): RateLimitGrpcServer {
  const host = options.host ?? '127.0.0.1';
  let port = options.port ?? 8081;
  const graceMs = options.shutdownGraceMs ?? 5000;
  const maxMessageBytes = checkBound(options.maxMessageBytes ?? MAX_MESSAGE_BYTES, 'maxMessageBytes');
  const connectionLimits = {
    maxConnections: checkBound(options.maxConnections ?? MAX_CONNECTIONS, 'maxConnections'),
    handshakeTimeoutMs: checkBound(options.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS, 'handshakeTimeoutMs'),
  };
  const incomplete = boundIncompleteRequests({
    requestTimeoutMs: checkBound(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, 'requestTimeoutMs'),
    maxIncompleteRequests: checkBound(
      options.maxIncompleteRequests ?? MAX_INCOMPLETE_REQUESTS,
      'maxIncompleteRequests',
    ),
  });
  // Every service of the port, reflection and health too: none takes a message near this size.
  const server = new (grpcJs().Server)({
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.max_concurrent_streams': checkBound(
      options.maxConcurrentStreams ?? MAX_CONCURRENT_STREAMS,
      'maxConcurrentStreams',
    ),
    // grpc-js counts a connection idle only while it has no stream: a
    // stream that never completes is incomplete-requests' to end.
    'grpc.max_connection_idle_ms': checkBound(options.idleTimeoutMs ?? IDLE_TIMEOUT_MS, 'idleTimeoutMs'),
    'grpc.keepalive_time_ms': checkBound(options.keepaliveTimeMs ?? KEEPALIVE_TIME_MS, 'keepaliveTimeMs'),
    // First: it needs grpc-js's own call, below any other interceptor.
    interceptors: [incomplete.interceptor],
  });
  const bounds = service.bounds ?? DEFAULT_REQUEST_BOUNDS;

  const shouldRateLimit = shouldRateLimitHandler(service, (call) => incomplete.arrived(call));
  server.addService(withRequestChecks(LYFT_SERVICE, bounds, 'lyft'), { ShouldRateLimit: shouldRateLimit });
  server.addService(withRequestChecks(ENVOY_V3_SERVICE, bounds, 'envoy'), { ShouldRateLimit: shouldRateLimit });
  // `ratelimit` is the name envoyproxy/ratelimit's health server answers for: probes written for it ask that.
  const health = createHealthRegistry(['', ENVOYPROXY_HEALTH_NAME, LYFT_SERVICE, ENVOY_V3_SERVICE, HEALTH_SERVICE]);
  health.addToServer(server);
  addReflectionOnDemand(server);

  let started: Promise<number> | undefined;
  let stopped: Promise<void> | undefined;
  let listener: GrpcListener | undefined;

  return {
    server,
    health,
    get port() {
      return port;
    },
    start() {
      // Our own listener, not bindAsync: grpc-js's waits for a preface
      // forever and takes any number of connections (see ./port/connections).
      started ??= listenForGrpc(server, host, port, connectionLimits, options.bound).then((bound) => {
        listener = bound;
        if (stopped) bound.close();
        return (port = bound.port);
      });
      return started;
    },
    drain() {
      health.drain();
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        health.shutdown();
        listener?.close();
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return stopped;
    },
  };
}
