/**
 * The rate-limit service's answer, honoured as Envoy honours it, through the
 * gateway to a real upstream: `raw_body` as the 429's body, the headers it
 * asks to add to the request and the response, `x-envoy-ratelimited` on a
 * 429 it caused (the real built-in service over gRPC, and a grpc-js server
 * of Envoy's own protos for what the built-in never sends), and TLS to it.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createRateLimitStage } from '../../../../src/gateway/stages/ratelimit-stage';
import { createRateLimitGrpcServer, createRateLimitService, type RateLimitGrpcServer } from '../../../../src/ratelimit';
import { startRateLimitAnswerServer, type RateLimitAnswerServer } from '../../../support/ratelimit-answer-server';
import { selfSignedLocalhost } from '../../../support/self-signed';
import { memoryLogger } from '../../../support/memory-logger';
import { configOf, mapping } from '../../../support/records';
import { configRig, type Rig } from '../../../support/routing-rig';

const LABELS = { shop: [{ request_label_group: [{ generic_key: 'orders' }] }] };

function rigFor(
  service: string,
  fields: Record<string, unknown> = {},
  extra: unknown[] = [],
  credentials?: grpc.ChannelCredentials,
): Promise<Rig> {
  return configRig(
    (up) =>
      configOf(
        mapping('/orders/', up, { labels: LABELS, add_request_headers: { 'X-Route': 'orders' } }),
        {
          apiVersion: 'gateway/v1',
          kind: 'RateLimitService',
          name: 'limits',
          service,
          domain: 'shop',
          timeout_ms: 2000,
          ...fields,
        },
        ...extra,
      ),
    {
      stages: {
        rateLimit: (record, modules, settings) =>
          createRateLimitStage(record, modules, { ...settings, logger: memoryLogger(), credentials }),
      },
    },
  );
}

describe("the rate-limit stage, honouring the service's answer", () => {
  let rls: RateLimitAnswerServer;
  let rig: Rig;
  before(async () => {
    rls = await startRateLimitAnswerServer();
    rig = await rigFor(rls.address);
  });
  after(async () => {
    await rig?.close();
    await rls?.close();
  });

  it('answers 429 with the raw_body, the headers the service adds and x-envoy-ratelimited, and never calls the upstream', async () => {
    rls.answer = () => ({
      overall_code: 'OVER_LIMIT',
      raw_body: Buffer.from('slow down, please'),
      response_headers_to_add: [{ key: 'x-quota-left', value: '0' }],
    });
    const res = await rig.call('/orders/1');
    assert.deepEqual(
      [
        res.status,
        res.answer.text,
        res.answer.headers['content-type'],
        res.answer.headers['x-quota-left'],
        res.answer.headers['x-envoy-ratelimited'],
        res.received,
      ],
      [429, 'slow down, please', 'text/plain; charset=utf-8', '0', 'true', undefined],
    );
  });

  it("passes request_headers_to_add to the upstream, and response_headers_to_add onto the upstream's answer", async () => {
    rls.answer = () => ({
      overall_code: 'OK',
      request_headers_to_add: [
        { key: 'x-quota-bucket', value: 'gold' },
        { key: 'host', value: 'evil.example' },
        { key: 'x-travel-user', value: 'mallory' },
      ],
      response_headers_to_add: [{ key: 'x-quota-left', value: '41' }],
    });
    const res = await rig.call('/orders/1');
    const got = res.received!.headers;
    assert.deepEqual(
      [res.route, got['x-quota-bucket'], got.host, got['x-travel-user']],
      ['orders', 'gold', rig.upstream, undefined],
    );
    assert.deepEqual([res.answer.headers['x-quota-left'], res.answer.text], ['41', 'ok']);
    assert.deepEqual(rls.received.at(-1)?.descriptors[0].entries, [{ key: 'generic_key', value: 'orders' }]);
  });
});

describe('the rate-limit stage, with the built-in rate-limit service over gRPC', () => {
  let grpcServer: RateLimitGrpcServer;
  let address: string;
  before(async () => {
    const service = createRateLimitService({
      logger: memoryLogger(),
      limits: [
        {
          domain: 'shop',
          descriptors: [{ key: 'generic_key', value: 'orders', rate_limit: { unit: 'hour', requests_per_unit: 1 } }],
        },
      ],
    });
    grpcServer = createRateLimitGrpcServer(service, { port: 0 });
    address = `127.0.0.1:${await grpcServer.start()}`;
  });
  after(() => grpcServer?.stop());

  it('marks the 429 it caused with x-envoy-ratelimited: true, unless the Module suppresses envoy headers', async () => {
    const rig = await rigFor(address);
    try {
      assert.equal((await rig.call('/orders/1')).status, 200);
      const refused = await rig.call('/orders/1');
      assert.deepEqual(
        [refused.status, refused.answer.headers['x-envoy-ratelimited'], refused.answer.json().code],
        [429, 'true', 429],
      );
    } finally {
      await rig.close();
    }
    const quiet = await rigFor(address, {}, [
      { apiVersion: 'gateway/v1', kind: 'Module', name: 'ambassador', config: { suppress_envoy_headers: true } },
    ]);
    try {
      const refused = await quiet.call('/orders/1');
      assert.deepEqual([refused.status, refused.answer.headers['x-envoy-ratelimited']], [429, undefined]);
    } finally {
      await quiet.close();
    }
  });
});

describe('the rate-limit stage, asking over TLS', () => {
  let cert: Buffer;
  let rls: RateLimitAnswerServer;
  before(async () => {
    const made = selfSignedLocalhost();
    cert = made.cert;
    rls = await startRateLimitAnswerServer(made);
  });
  after(() => rls?.close());

  it('asks over TLS with tls set, and keeps grpc.use_resource_exhausted_code on the record', async () => {
    rls.answer = () => ({ overall_code: 'OVER_LIMIT' });
    const fields = { tls: true, grpc: { use_resource_exhausted_code: true } };
    const rig = await rigFor(`localhost:${rls.port}`, fields, [], grpc.credentials.createSsl(cert));
    try {
      assert.equal((await rig.call('/orders/1')).status, 429);
      const record = configOf({
        apiVersion: 'gateway/v1',
        kind: 'RateLimitService',
        name: 'limits',
        service: 'rls:8081',
        ...fields,
      });
      assert.deepEqual(record.rateLimitService?.grpc, { use_resource_exhausted_code: true });
    } finally {
      await rig.close();
    }
  });

  it('lets the request through, as the service being down, when its certificate is not one the system trusts', async () => {
    rls.answer = () => ({ overall_code: 'OVER_LIMIT' });
    const rig = await rigFor(`localhost:${rls.port}`, { tls: true });
    try {
      assert.equal((await rig.call('/orders/1')).status, 200);
    } finally {
      await rig.close();
    }
  });
});
