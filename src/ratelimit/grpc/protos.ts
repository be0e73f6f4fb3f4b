/**
 * @module ratelimit/grpc/protos
 * The rate-limit and health protos of the `proto/` folder, loaded at run time
 * with @grpc/proto-loader. The loaded definitions are immutable, so they are
 * read once per process and shared, and loaded (with the loader and
 * protobufjs) at their first use: a gateway answers HTTP before it does.
 */
import path from 'node:path';
import type * as protoLoader from '@grpc/proto-loader';

/** The `proto/` folder of the project. */
export const PROTO_DIR = path.resolve(__dirname, '../../../proto');

export const LYFT_SERVICE = 'pb.lyft.ratelimit.RateLimitService';
export const ENVOY_V3_SERVICE = 'envoy.service.ratelimit.v3.RateLimitService';
export const HEALTH_SERVICE = 'grpc.health.v1.Health';

/** The service protos, relative to {@link PROTO_DIR}. */
export const PROTO_FILES: readonly string[] = [
  'pb/lyft/ratelimit/ratelimit.proto',
  'envoy/service/ratelimit/v3/rls.proto',
  'grpc/health/v1/health.proto',
];

/** How every message is turned into a plain object: field names as in the protos. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

let loaded: protoLoader.PackageDefinition | undefined;

/** The package definition of both rate-limit services and of health. */
export function rateLimitProtos(): protoLoader.PackageDefinition {
  loaded ??= (require('@grpc/proto-loader') as typeof protoLoader).loadSync([...PROTO_FILES], LOADER_OPTIONS);
  return loaded;
}

/** The method definition of a service's only method, `ShouldRateLimit` or `Check`... */
export function methodOf(service: string, method: string): protoLoader.MethodDefinition<object, object> {
  const def = rateLimitProtos()[service] as protoLoader.ServiceDefinition;
  return def[method];
}
