/**
 * @module test/support/grpc-clients
 * Plain @grpc/grpc-js clients built from the protos, as any third-party
 * client would build them: both rate-limit services, health and reflection.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import path from 'node:path';

const PROTO_DIR = path.join(__dirname, '..', '..', 'proto');
const OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** A client made from the protos: grpc-js's own members, and a method per rpc, typed by no declaration. */
type GrpcClient = grpc.Client & Record<string, Any>;

function load(files: string[]): Any {
  return grpc.loadPackageDefinition(protoLoader.loadSync(files, OPTIONS));
}

export interface Clients {
  lyft: GrpcClient;
  envoy: GrpcClient;
  health: GrpcClient;
  reflectionV1alpha: GrpcClient;
  reflectionV1: GrpcClient;
  close(): void;
}

export function grpcClients(address: string): Clients {
  const creds = grpc.credentials.createInsecure();
  const pkg = load([
    'pb/lyft/ratelimit/ratelimit.proto',
    'envoy/service/ratelimit/v3/rls.proto',
    'grpc/health/v1/health.proto',
  ]);
  const reflection = load([
    require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1alpha/reflection.proto'),
    require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'),
  ]);
  const clients = {
    lyft: new pkg.pb.lyft.ratelimit.RateLimitService(address, creds),
    envoy: new pkg.envoy.service.ratelimit.v3.RateLimitService(address, creds),
    health: new pkg.grpc.health.v1.Health(address, creds),
    reflectionV1alpha: new reflection.grpc.reflection.v1alpha.ServerReflection(address, creds),
    reflectionV1: new reflection.grpc.reflection.v1.ServerReflection(address, creds),
  };
  return {
    ...clients,
    close() {
      for (const c of Object.values(clients)) c.close();
    },
  };
}

/**
 * Calls a unary method and resolves its answer or rejects its status. The
 * deadline is longer than any test by default: a call's own status, not a
 * deadline a loaded machine reaches first, is what a test reads.
 */
export function unary<T = Any>(client: Any, method: string, request: object, deadlineMs = 600_000): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + deadlineMs }, (err: grpc.ServiceError | null, res: T) =>
      err ? reject(err) : resolve(res),
    );
  });
}

/** The service names a reflection endpoint lists. */
export function listServices(client: Any): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (res: Any) => {
      call.end();
      if (res.error_response) reject(new Error(res.error_response.error_message));
      else resolve(res.list_services_response.service.map((s: { name: string }) => s.name).sort());
    });
    call.on('error', reject);
    call.write({ host: '', list_services: '*' });
  });
}

/** One request on a reflection stream, its one answer. */
export function reflect(client: Any, request: object): Promise<Any> {
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (res: Any) => {
      call.end();
      resolve(res);
    });
    call.on('error', reject);
    call.write({ host: '', ...request });
  });
}
