/**
 * @module test/support/slow-ratelimit-server
 * An envoy v3 rate-limit gRPC server that holds every call until released:
 * a service that answers too late.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import path from 'node:path';

export interface SlowServer {
  port: number;
  /** Calls received so far. */
  calls: number;
  /** Answers the held calls OK and closes the server. */
  stop(): Promise<void>;
}

export async function startSlowServer(): Promise<SlowServer> {
  const def = protoLoader.loadSync('envoy/service/ratelimit/v3/rls.proto', {
    keepCase: true,
    defaults: true,
    enums: String,
    includeDirs: [path.join(__dirname, '..', '..', 'proto')],
  });
  const server = new grpc.Server();
  const held: (() => void)[] = [];
  const state = { calls: 0 };
  server.addService(def['envoy.service.ratelimit.v3.RateLimitService'] as grpc.ServiceDefinition, {
    ShouldRateLimit(_call: grpc.ServerUnaryCall<object, object>, callback: grpc.sendUnaryData<object>) {
      state.calls++;
      held.push(() => callback(null, { overall_code: 'OK' }));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port,
    get calls() {
      return state.calls;
    },
    async stop() {
      for (const release of held.splice(0)) release();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
