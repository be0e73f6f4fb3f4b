/**
 * @module test/gateway/upstream/grpc/ratelimit-service
 * The gRPC rate-limit service reached through the gateway's own port, as
 * docs/upstreams.md shows: a Mapping with grpc: true to the service's port
 * puts auth in front of it there, while its own port answers as before.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { copyConfig, type TempConfig } from '../../../support/config-folder';
import { ALICE } from '../../../support/credentials';
import { grpcClients, unary, type Clients } from '../../../support/grpc-clients';
import { killAll, startCli } from '../../../support/process';
import { freePort } from '../../../support/ports';

const REQUEST = { domain: 'gateway', descriptors: [{ entries: [{ key: 'user', value: 'someone' }] }], hits_addend: 1 };

describe('the gRPC rate-limit service through the gateway port', function () {
  let config: TempConfig;
  const opened: Clients[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) c.close();
    await killAll();
    config?.remove();
  });

  it('answers a call with credentials, refuses one without as UNAUTHENTICATED, and its own port still answers', async () => {
    const grpcPort = await freePort();
    config = copyConfig();
    config.write(
      'ratelimit-mapping.yaml',
      [
        'apiVersion: gateway/v1',
        'kind: Mapping',
        'name: ratelimit-grpc',
        'prefix: /envoy.service.ratelimit.v3.RateLimitService/',
        'rewrite: ""',
        `service: 127.0.0.1:${grpcPort}`,
        'grpc: true',
        '',
      ].join('\n'),
    );
    const server = await startCli(['start', '--no-watch', '--config', config.dir, '--grpc-port', String(grpcPort)], {
      env: { PORT: '0', LOG_LEVEL: 'warn' },
    });
    const through = grpcClients(`127.0.0.1:${server.port}`);
    const direct = grpcClients(`127.0.0.1:${grpcPort}`);
    opened.push(through, direct);

    await assert.rejects(unary(through.envoy, 'ShouldRateLimit', REQUEST), (err: grpc.ServiceError) => {
      assert.equal(err.code, grpc.status.UNAUTHENTICATED, err.message);
      return true;
    });
    const metadata = new grpc.Metadata();
    metadata.set('authorization', ALICE);
    const answer = await new Promise<{ overall_code: string }>((resolve, reject) =>
      through.envoy.ShouldRateLimit(
        REQUEST,
        metadata,
        (err: grpc.ServiceError | null, res: { overall_code: string }) => (err ? reject(err) : resolve(res)),
      ),
    );
    assert.equal(answer.overall_code, 'OK');
    assert.equal((await unary<{ overall_code: string }>(direct.envoy, 'ShouldRateLimit', REQUEST)).overall_code, 'OK');
  });
});
