/**
 * @module test/ratelimit/grpc/reflection-on-demand
 * Reflection built at its first call: a new server answers its very first
 * reflection calls, made at once on v1alpha and v1, as it answers later ones.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRateLimitGrpcServer, createRateLimitService } from '../../../src/ratelimit';
import { grpcClients, listServices, unary } from '../../support/grpc-clients';
import { memoryLogger } from '../../support/memory-logger';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'envoy-config');

describe('rate-limit gRPC server: reflection built at its first call', () => {
  it('answers the first reflection calls of a new server, made at once on v1alpha and v1, with every service', async () => {
    const service = createRateLimitService({ limitsDir: FIXTURE, logger: memoryLogger() });
    const server = createRateLimitGrpcServer(service, { port: 0 });
    const clients = grpcClients(`127.0.0.1:${await server.start()}`);
    try {
      const [v1alpha, v1] = await Promise.all([
        listServices(clients.reflectionV1alpha),
        listServices(clients.reflectionV1),
      ]);
      assert.deepEqual(v1alpha, v1);
      for (const name of [
        'envoy.service.ratelimit.v3.RateLimitService',
        'pb.lyft.ratelimit.RateLimitService',
        'grpc.health.v1.Health',
        'grpc.reflection.v1.ServerReflection',
        'grpc.reflection.v1alpha.ServerReflection',
      ])
        assert.ok(v1.includes(name), `${name} missing from ${v1.join(', ')}`);
      // And the rate-limit service beside it, as before any reflection call.
      const answer = await unary<{ overall_code: string }>(clients.envoy, 'ShouldRateLimit', { domain: 'messaging' });
      assert.equal(answer.overall_code, 'OK');
    } finally {
      clients.close();
      await server.stop();
      await service.close();
    }
  });
});
