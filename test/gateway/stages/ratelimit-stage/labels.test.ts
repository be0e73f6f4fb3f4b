/**
 * Rate-limit labels in the forms Emissary reads (v3alpha1's
 * `request_headers`, `generic_key`, `remote_address`, `source_cluster`,
 * `destination_cluster`, and the older strings and header labels), through
 * the gateway: the descriptors a real gRPC rate-limit service receives.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { configFromRecords, createGateway, type Gateway, type GatewayOptions } from '../../../../src/gateway';
import { close, listen } from '../../../support/server';
import { configOf, mapping, mappingFields } from '../../../support/records';
import { NO_BOUND_MS } from '../../../support/polling';
import { echoModule, registry } from '../../../support/modules';
import { send } from '../../../support/client';

interface Received {
  domain: string;
  descriptors: { entries: { key: string; value: string }[] }[];
}

/** An envoy v3 rate-limit service that answers OK and keeps what it was asked. */
async function recordingLimits(): Promise<{ address: string; received: Received[]; stop(): Promise<void> }> {
  const def = protoLoader.loadSync('envoy/service/ratelimit/v3/rls.proto', {
    keepCase: true,
    defaults: true,
    enums: String,
    includeDirs: [path.join(__dirname, '..', '..', '..', '..', 'proto')],
  });
  const server = new grpc.Server();
  const received: Received[] = [];
  server.addService(def['envoy.service.ratelimit.v3.RateLimitService'] as grpc.ServiceDefinition, {
    ShouldRateLimit(call: grpc.ServerUnaryCall<Received, object>, callback: grpc.sendUnaryData<object>) {
      received.push({
        domain: call.request.domain,
        descriptors: call.request.descriptors.map((d) => ({
          entries: d.entries.map(({ key, value }) => ({ key, value })),
        })),
      });
      callback(null, { overall_code: 'OK' });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    received,
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

const LABELS = {
  ambassador: [
    {
      limits: [
        { request_headers: { key: 'tenant', header_name: 'X-Tenant' } },
        { generic_key: { value: 'catalog', v2Shorthand: true } },
        { generic_key: { key: 'tier', value: 'gold' } },
      ],
    },
    {
      by_client: [
        { remote_address: {} },
        { request_headers: { key: 'plan', header_name: 'X-Plan', omit_if_not_present: true } },
      ],
    },
    { clusters: [{ source_cluster: { key: 'source_cluster' } }, { destination_cluster: {} }] },
    { request_label_group: ['source_cluster', 'destination_cluster', 'remote_address', 'catalog'] },
    { request_label_group: [{ tenant: { header: 'x-tenant' } }, { generic_key: 'older-form' }] },
  ],
};

describe('gateway rate-limit labels, as a gRPC rate-limit service receives them', () => {
  let limits: Awaited<ReturnType<typeof recordingLimits>>;

  before(async () => {
    limits = await recordingLimits();
  });
  after(() => limits.stop());

  async function descriptors(
    options: Omit<GatewayOptions, 'config' | 'modules'>,
    headers: Record<string, string>,
    labels: object = LABELS,
    target = '/catalog/lamps',
  ): Promise<Received> {
    const gateway: Gateway = createGateway({
      ...options,
      modules: registry(echoModule('catalog')),
      config: configOf(mapping('/catalog/', 'catalog', { labels }), {
        apiVersion: 'gateway/v1',
        kind: 'RateLimitService',
        name: 'limits',
        service: limits.address,
        domain: 'ambassador',
        protocol_version: 'v3',
        timeout_ms: NO_BOUND_MS,
      }),
    });
    const { server, url } = await listen(gateway.app.callback());
    try {
      const before = limits.received.length;
      const res = await send(url, target, { headers });
      assert.equal(res.status, 200, res.text);
      assert.equal(limits.received.length, before + 1);
      return limits.received[before];
    } finally {
      await close(server);
      await gateway.close();
    }
  }

  it('fills each label in as Envoy does: headers under their key, generic keys, the client, the clusters', async () => {
    const got = await descriptors({ sourceCluster: 'edge-eu' }, { 'X-Tenant': 'acme', 'X-Plan': 'pro' });
    assert.equal(got.domain, 'ambassador');
    assert.deepEqual(got.descriptors, [
      {
        entries: [
          { key: 'tenant', value: 'acme' },
          { key: 'generic_key', value: 'catalog' },
          { key: 'tier', value: 'gold' },
        ],
      },
      {
        entries: [
          { key: 'remote_address', value: '127.0.0.1' },
          { key: 'plan', value: 'pro' },
        ],
      },
      {
        entries: [
          { key: 'source_cluster', value: 'edge-eu' },
          { key: 'destination_cluster', value: 'catalog' },
        ],
      },
      {
        entries: [
          { key: 'source_cluster', value: 'edge-eu' },
          { key: 'destination_cluster', value: 'catalog' },
          { key: 'remote_address', value: '127.0.0.1' },
          { key: 'generic_key', value: 'catalog' },
        ],
      },
      {
        entries: [
          { key: 'tenant', value: 'acme' },
          { key: 'generic_key', value: 'older-form' },
        ],
      },
    ]);
  });

  it('drops a group whose header is missing, or only that entry with omit_if_not_present; source_cluster is gatehouse by default', async () => {
    const got = await descriptors({}, {});
    assert.deepEqual(got.descriptors, [
      { entries: [{ key: 'remote_address', value: '127.0.0.1' }] },
      {
        entries: [
          { key: 'source_cluster', value: 'gatehouse' },
          { key: 'destination_cluster', value: 'catalog' },
        ],
      },
      {
        entries: [
          { key: 'source_cluster', value: 'gatehouse' },
          { key: 'destination_cluster', value: 'catalog' },
          { key: 'remote_address', value: '127.0.0.1' },
          { key: 'generic_key', value: 'catalog' },
        ],
      },
    ]);
  });

  it("fills Envoy's pseudo-headers in: the Host, the method, the path as routed with its query, the scheme", async () => {
    const pseudo = {
      ambassador: [
        {
          request: [
            { request_headers: { key: 'host', header_name: ':authority' } },
            { request_headers: { key: 'method', header_name: ':METHOD' } },
          ],
        },
        { request_label_group: [{ path: { header: ':path' } }, { scheme: { header: ':scheme' } }] },
      ],
    };
    const got = await descriptors({}, { Host: 'shop.example' }, pseudo, '/catalog//lamps/./red?size=2');
    assert.deepEqual(got.descriptors, [
      {
        entries: [
          { key: 'host', value: 'shop.example' },
          { key: 'method', value: 'GET' },
        ],
      },
      {
        entries: [
          { key: 'path', value: '/catalog/lamps/red?size=2' },
          { key: 'scheme', value: 'http' },
        ],
      },
    ]);
  });

  it('takes the client behind a trusted proxy from the address that proxy wrote last in X-Forwarded-For, not the one the client wrote', async () => {
    const got = await descriptors({ trustProxy: true }, { 'X-Forwarded-For': '198.51.100.66, 203.0.113.9' });
    assert.deepEqual(got.descriptors[0], { entries: [{ key: 'remote_address', value: '203.0.113.9' }] });
    const direct = await descriptors({}, { 'X-Forwarded-For': '198.51.100.66' });
    assert.deepEqual(direct.descriptors[0], { entries: [{ key: 'remote_address', value: '127.0.0.1' }] });
  });
});

describe('gateway config: rate-limit labels and RateLimitService', () => {
  const { at: AT, load, problems } = mappingFields('catalog', 'catalog-route', '/catalog/');

  it('loads labels in each form, header names in lower case and omit_if_not_present filled in', () => {
    const m = load(
      'labels:\n  ambassador:\n    - limits:\n        - request_headers: {key: tenant, header_name: X-Tenant}\n        - remote_address: {}',
    );
    assert.deepEqual(m.labels, {
      ambassador: [
        {
          limits: [
            { request_headers: { key: 'tenant', header_name: 'x-tenant', omit_if_not_present: false } },
            { remote_address: {} },
          ],
        },
      ],
    });
  });

  it('takes the pseudo-headers Envoy reads as header names, and refuses any other name with a colon', () => {
    const label = (text: string) => problems(`labels:\n  ambassador:\n    - limits:\n        - ${text}`);
    const m = load(
      "labels:\n  ambassador:\n    - limits:\n        - request_headers: {key: p, header_name: ':path'}\n        - a: {header: ':Authority'}",
    );
    assert.deepEqual(m.labels, {
      ambassador: [
        {
          limits: [
            { request_headers: { key: 'p', header_name: ':path', omit_if_not_present: false } },
            { a: { header: ':authority', omit_if_not_present: false } },
          ],
        },
      ],
    });
    assert.deepEqual(label("request_headers: {key: p, header_name: ':status'}"), [
      `${AT} labels.ambassador.0.limits.0.request_headers.header_name: must be an HTTP header name, or :authority, :method, :path or :scheme`,
    ]);
  });

  it('refuses a label that is none of the forms, naming where it is', () => {
    const label = (text: string) => problems(`labels:\n  ambassador:\n    - limits:\n        - ${text}`);
    assert.deepEqual(label('request_headers: {key: tenant}'), [
      `${AT} labels.ambassador.0.limits.0.request_headers.header_name: required (expected string)`,
    ]);
    assert.deepEqual(label('remote_address: {key: client}'), [
      `${AT} labels.ambassador.0.limits.0.remote_address.key: must be remote_address, the label's own name`,
    ]);
    assert.deepEqual(label('generic_key: {key: tier}'), [
      `${AT} labels.ambassador.0.limits.0.generic_key.value: required (expected string)`,
    ]);
    assert.deepEqual(label('{tenant: {header: x-tenant}, plan: {header: x-plan}}'), [
      `${AT} labels.ambassador.0.limits.0: has 2 keys (tenant, plan) where a label has one (a field written beside its label, not under it?): a label is a string (a generic_key value) or one key naming it: {<key>: {header}}, {request_headers: {key, header_name}}, {generic_key: {value}}, {remote_address: {}}...`,
    ]);
    // The fields of a request_headers label written beside the label's name instead of under it.
    assert.match(
      label('x-tenant:\n          request_headers: {key: tenant, header_name: x-tenant}')[0],
      /limits\.0: has 2 keys \(x-tenant, request_headers\) where a label has one/,
    );
    assert.deepEqual(problems('labels:\n  ambassador:\n    - {one: [a], two: [b]}'), [
      `${AT} labels.ambassador.0: a label group is one key (request_label_group, or any name) holding its labels`,
    ]);
  });

  it('accepts protocol_version v3 on a RateLimitService, and refuses v2 with the reason', () => {
    const record = (version: string) => ({
      apiVersion: 'gateway/v1',
      kind: 'RateLimitService',
      name: 'limits',
      service: '127.0.0.1:9',
      protocol_version: version,
    });
    const v3 = configFromRecords([record('v3')]);
    assert.equal(v3.ok && v3.config.rateLimitService?.protocol_version, 'v3');
    const v2 = configFromRecords([record('v2')]);
    assert.deepEqual(v2.ok ? [] : v2.problems.map((p) => p.text), [
      'RateLimitService limits: protocol_version: must be v3 (or left out): the gateway calls envoy.service.ratelimit.v3.RateLimitService; v2 is the API Envoy no longer speaks, and Emissary 3 refuses it too; envoyproxy/ratelimit and the built-in service answer v3',
    ]);
  });
});
