/**
 * @module ratelimit/grpc-server
 * The rate-limit service's network face: plaintext gRPC serving
 * `pb.lyft.ratelimit.RateLimitService` and
 * `envoy.service.ratelimit.v3.RateLimitService` from one handler, server
 * reflection (v1alpha and v1) and `grpc.health.v1.Health`.
 */
import * as grpc from '@grpc/grpc-js';
import { hostPort } from '../http';
import { requestFromProto, responseToProto, type ProtoRequest, type ProtoResponse } from './grpc-codec';
import { checkingUtf8, NOT_UTF8, type CheckedRequest } from './grpc-utf8';
import { createHealthRegistry, type HealthRegistry } from './health';
import { ENVOY_V3_SERVICE, HEALTH_SERVICE, LYFT_SERVICE, rateLimitProtos } from './protos';
import { addReflection } from './reflection';
import type { RateLimiter } from './types';

export interface RateLimitGrpcServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8081; 0 picks a free port. */
  port?: number;
  /** How long `stop()` lets calls finish before cutting them, in ms. Default 5000. */
  shutdownGraceMs?: number;
}

export interface RateLimitGrpcServer {
  readonly server: grpc.Server;
  readonly health: HealthRegistry;
  /** The bound port once started (the asked one before). */
  readonly port: number;
  /** Binds and serves; resolves the port. */
  start(): Promise<number>;
  /** Finishes running calls (cut after the grace period) and closes the port. */
  stop(): Promise<void>;
}

/** Error codes of the typed face that map to a gRPC status. */
function grpcError(err: unknown): grpc.ServiceError | { code: grpc.status; details: string } {
  if ((err as { code?: unknown })?.code === 'INVALID_ARGUMENT') {
    return { code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message };
  }
  // Store failures: the caller applies its failure mode; the details stay inside.
  return { code: grpc.status.UNAVAILABLE, details: 'rate-limit store unavailable' };
}

/** A rate-limit service definition whose requests say where a string is not UTF-8 (see grpc-utf8). */
function withUtf8Check(definition: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const method = definition.ShouldRateLimit as grpc.MethodDefinition<ProtoRequest, ProtoResponse>;
  return { ...definition, ShouldRateLimit: { ...method, requestDeserialize: checkingUtf8(method.requestDeserialize) } };
}

/** Serves a rate limiter (the in-process service, usually) over gRPC. */
export function createRateLimitGrpcServer(service: RateLimiter, options: RateLimitGrpcServerOptions = {}): RateLimitGrpcServer {
  const host = options.host ?? '127.0.0.1';
  let port = options.port ?? 8081;
  const graceMs = options.shutdownGraceMs ?? 5000;
  const server = new grpc.Server();
  const protos = rateLimitProtos();

  const shouldRateLimit: grpc.handleUnaryCall<CheckedRequest, ProtoResponse> = (call, callback) => {
    const notUtf8 = call.request[NOT_UTF8];
    if (notUtf8 !== undefined) {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: `${notUtf8}: is not UTF-8` });
      return;
    }
    let request;
    try {
      request = requestFromProto(call.request);
    } catch {
      callback({ code: grpc.status.INVALID_ARGUMENT, details: 'malformed rate-limit request' });
      return;
    }
    // A call cancelled, or past its deadline, while it waited in this process
    // is not decided: its caller has given up, and a hit counted now would
    // be one nobody was answered for. The caller's deadline is the wait for
    // the store; should the caller leave before the store answers, a hit it
    // counted is taken back.
    if (call.cancelled) return;
    const deadline = call.getDeadline();
    const left = (deadline instanceof Date ? deadline.getTime() : deadline) - Date.now();
    if (left <= 0) {
      callback({ code: grpc.status.DEADLINE_EXCEEDED, details: 'the deadline passed before the decision' });
      return;
    }
    const options = { timeoutMs: left === Infinity ? undefined : left, gone: () => call.cancelled };
    service.shouldRateLimit(request, options).then(
      (response) => callback(null, responseToProto(response)),
      (err: unknown) => callback(grpcError(err)),
    );
  };

  server.addService(withUtf8Check(protos[LYFT_SERVICE] as grpc.ServiceDefinition), { ShouldRateLimit: shouldRateLimit });
  server.addService(withUtf8Check(protos[ENVOY_V3_SERVICE] as grpc.ServiceDefinition), { ShouldRateLimit: shouldRateLimit });
  const health = createHealthRegistry(['', LYFT_SERVICE, ENVOY_V3_SERVICE, HEALTH_SERVICE]);
  health.addToServer(server);
  addReflection(server);

  let started: Promise<number> | undefined;
  let stopped: Promise<void> | undefined;

  return {
    server,
    health,
    get port() {
      return port;
    },
    start() {
      const address = hostPort(host, port);
      started ??= new Promise((resolve, reject) => {
        server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
          if (err) reject(err);
          else resolve((port = bound));
        });
      });
      return started;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        health.shutdown();
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
