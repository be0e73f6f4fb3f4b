/**
 * Emissary's RateLimitService and labels, in either form, with a real gRPC
 * rate-limit service: the domain it is asked under (Emissary's
 * `ambassador` when the record names none), the descriptors each label
 * form and the ambassador Module's default labels make, and the 429 past a
 * limit.
 */
import assert from 'node:assert/strict';
import {
  createRateLimitGrpcServer,
  createRateLimitService,
  type RateLimitGrpcServer,
  type RateLimitRequest,
  type RateLimitService,
} from '../../../../src/ratelimit';
import { memoryLogger } from '../../../support/memory-logger';
import {
  emissaryRig,
  FORMS,
  loaded,
  notesOf,
  problems,
  written,
  type EmissaryRig,
  type Form,
} from '../../../support/emissary';

/** The descriptors of the requests the service got, as `key=value` lists. */
function descriptors(requests: readonly RateLimitRequest[]): string[][] {
  return requests.flatMap((r) => r.descriptors.map((d) => d.entries.map((e) => `${e.key}=${e.value}`)));
}

function fixtures(form: Form, up: string, rls: string) {
  const v2 = form === 'annotation';
  const tenantLabel = v2
    ? { tenant: { header: 'x-tenant', omit_if_not_present: true } }
    : { request_headers: { key: 'tenant', header_name: 'x-tenant', omit_if_not_present: true } };
  const catalogLabel = v2
    ? { generic_key: 'catalog', v3Key: 'area' }
    : { generic_key: { key: 'area', value: 'catalog' } };
  return [
    { kind: 'RateLimitService', name: 'limits', spec: { service: rls, timeout_ms: 5000, protocol_version: 'v3' } },
    {
      kind: 'Module',
      name: 'ambassador',
      spec: {
        config: {
          default_labels: {
            ambassador: { defaults: [v2 ? 'source_cluster' : { source_cluster: { key: 'source_cluster' } }] },
          },
        },
      },
    },
    {
      kind: 'Mapping',
      name: 'catalog',
      spec: {
        prefix: '/catalog/',
        service: up,
        labels: {
          ambassador: [
            { per_tenant: [tenantLabel, catalogLabel] },
            { peers: [v2 ? 'remote_address' : { remote_address: { key: 'remote_address' } }] },
          ],
        },
      },
    },
    { kind: 'Mapping', name: 'plain', spec: { prefix: '/plain/', service: up } },
    // The rate-limit tutorial's form: an action under a name of the label's own.
    {
      kind: 'Mapping',
      name: 'backend',
      spec: {
        prefix: '/backend/',
        service: up,
        labels: {
          ambassador: [
            {
              request_label_group: [
                {
                  'x-ambassador-test-allow': {
                    request_headers: { key: 'x-ambassador-test-allow', header_name: 'x-ambassador-test-allow' },
                  },
                },
              ],
            },
            {
              keyed: [
                { generic_key: { value: 'backend' } },
                { the_key: { generic_key: { key: 'zone', value: 'north' } } },
              ],
            },
          ],
        },
      },
    },
    {
      kind: 'Mapping',
      name: 'kitchen',
      spec: {
        prefix: '/kitchen/',
        service: up,
        labels: {
          ambassador: [
            { where: [v2 ? 'destination_cluster' : { destination_cluster: { key: 'destination_cluster' } }] },
          ],
        },
      },
    },
  ];
}

for (const form of FORMS) {
  describe(`Emissary rate limits, written as ${form === 'resource' ? 'v3alpha1 resources' : 'v2 records of the annotation'}`, function () {
    let limits: RateLimitService;
    let server: RateLimitGrpcServer;
    let rig: EmissaryRig;
    const seen: RateLimitRequest[] = [];

    before(async () => {
      limits = createRateLimitService({
        logger: memoryLogger(),
        limits: [
          {
            domain: 'ambassador',
            descriptors: [
              {
                key: 'source_cluster',
                descriptors: [
                  {
                    key: 'tenant',
                    value: 'tiny',
                    descriptors: [{ key: 'area', rate_limit: { unit: 'hour', requests_per_unit: 1 } }],
                  },
                  {
                    key: 'x-ambassador-test-allow',
                    value: 'probably',
                    rate_limit: { unit: 'hour', requests_per_unit: 1 },
                  },
                ],
              },
            ],
          },
        ],
      });
      server = createRateLimitGrpcServer(
        {
          shouldRateLimit: (request, options) => {
            seen.push(request);
            return limits.shouldRateLimit(request, options);
          },
        },
        { port: 0 },
      );
      const port = await server.start();
      rig = await emissaryRig((up) => written(form, ...fixtures(form, up, `127.0.0.1:${port}`)));
    });
    after(async () => {
      await rig?.close();
      await server?.stop();
      await limits?.close();
    });
    beforeEach(() => {
      seen.length = 0;
    });

    it("asks under Emissary's domain, ambassador, each group starting with the Module's default labels", async () => {
      assert.equal((await rig.call('/catalog/lamps', { headers: { 'X-Tenant': 'acme' } })).status, 200);
      assert.deepEqual(
        seen.map((r) => r.domain),
        ['ambassador'],
      );
      assert.deepEqual(descriptors(seen), [
        ['source_cluster=gatehouse', 'tenant=acme', 'area=catalog'],
        ['source_cluster=gatehouse', 'remote_address=127.0.0.1'],
      ]);
    });

    it('drops an entry whose header is missing with omit_if_not_present, and gives a Mapping without labels the default ones', async () => {
      await rig.call('/catalog/lamps');
      assert.deepEqual(descriptors(seen)[0], ['source_cluster=gatehouse', 'area=catalog']);
      seen.length = 0;
      await rig.call('/plain/x');
      assert.deepEqual(descriptors(seen), [['source_cluster=gatehouse']]);
    });

    it("names the upstream's cluster in destination_cluster, as Envoy names the cluster Emissary routes to", async () => {
      assert.equal((await rig.call('/kitchen/soup')).status, 200);
      assert.deepEqual(descriptors(seen), [
        ['source_cluster=gatehouse', `destination_cluster=cluster_${rig.upstream.replace(/[.:]/g, '_')}`],
      ]);
    });

    it("reads the rate-limit tutorial's label form and generic_key with and without key, and the tutorial's limit holds", async () => {
      const allowed = await rig.call('/backend/', { headers: { 'X-Ambassador-Test-Allow': 'true' } });
      assert.deepEqual(descriptors(seen), [
        ['source_cluster=gatehouse', 'x-ambassador-test-allow=true'],
        ['source_cluster=gatehouse', 'generic_key=backend', 'zone=north'],
      ]);
      const first = await rig.call('/backend/', { headers: { 'X-Ambassador-Test-Allow': 'probably' } });
      const second = await rig.call('/backend/', { headers: { 'X-Ambassador-Test-Allow': 'probably' } });
      assert.deepEqual([allowed.status, first.status, second.status], [200, 200, 429]);
      assert.equal(second.answer.headers['x-envoy-ratelimited'], 'true');
    });

    it('answers 429 once the service says the limit is reached', async () => {
      const first = await rig.call('/catalog/lamps', { headers: { 'X-Tenant': 'tiny' } });
      const second = await rig.call('/catalog/lamps', { headers: { 'X-Tenant': 'tiny' } });
      assert.deepEqual([first.status, second.status, second.received], [200, 429, undefined]);
      assert.deepEqual(second.answer.json(), { code: 429, message: '429: Too Many Requests' });
    });
  });
}

describe("Emissary's RateLimitService fields", () => {
  it("reads grpc.use_resource_exhausted_code (Emissary 3's gRPC status over a limit), in either form", () => {
    const limits = {
      kind: 'RateLimitService',
      name: 'limits',
      spec: { service: '127.0.0.1:8081', protocol_version: 'v3', grpc: { use_resource_exhausted_code: true } },
    };
    for (const form of FORMS) {
      const result = loaded(written(form, limits));
      assert.equal(result.config.rateLimitService?.service, '127.0.0.1:8081');
      assert.deepEqual(result.config.rateLimitService?.grpc, { use_resource_exhausted_code: true });
      // Served as Emissary serves it: nothing to note.
      assert.ok(!notesOf(result, 'limits').some((n) => /grpc: /.test(n)), form);
    }
  });
});

describe("Emissary's labels written wrong", () => {
  it('refuses an action it does not know, and the fields an action lacks or does not have, at the label, in either form', () => {
    const labelled = (labels: unknown) => ({
      kind: 'Mapping',
      name: 'shop',
      spec: { prefix: '/shop/', service: 'shop:80', labels },
    });
    for (const form of FORMS) {
      const at = `config/emissary.yaml: ${form === 'resource' ? '' : 'service emissary: '}Mapping shop: ${form === 'resource' ? 'spec.' : ''}labels.ambassador.0.api`;
      assert.deepEqual(
        problems(
          written(
            form,
            labelled({
              ambassador: [
                {
                  api: [
                    { client_ip: { key: 'ip' } },
                    { request_headers: { key: 'user' } },
                    { remote_address: { key: 'ip' } },
                    { generic_key: { key: 'tier' } },
                  ],
                },
              ],
            }),
          ),
        ),
        [
          `${at}.0.client_ip: 'client_ip' is no label action (request_headers, generic_key, source_cluster, destination_cluster, remote_address), nor a label {<key>: {header: <name>}}`,
          `${at}.1.request_headers.header_name: required (expected string)`,
          `${at}.2.remote_address.key: must be remote_address, the label's own name`,
          `${at}.3.generic_key.value: required (expected string)`,
        ],
        form,
      );
    }
  });
});

describe('a label written with its name beside its action, at the same indent', () => {
  // As Emissary's rate-limit tutorial indents it: `- x-allow:` above `request_headers:`, one mapping of two keys.
  const resource = (form: 'resource' | 'annotation') =>
    [
      form === 'resource' ? 'apiVersion: getambassador.io/v3alpha1' : 'apiVersion: getambassador.io/v2',
      'kind: Mapping',
      ...(form === 'resource' ? ['metadata:', '  name: backend', 'spec:'] : ['name: backend']),
      ...[
        'prefix: /backend/',
        'service: backend:80',
        'labels:',
        '  shop:',
        '    - request_label_group:',
        '      - x-allow:',
        '        request_headers:',
        '            key: "x-allow"',
        '            header_name: "x-allow"',
      ].map((line) => (form === 'resource' ? `  ${line}` : line)),
    ].join('\n');

  it('is read in a resource as Kubernetes stores it, the name pruned, with a note', () => {
    const result = loaded(resource('resource'));
    assert.deepEqual(result.config.mappings[0].labels, {
      shop: [
        {
          request_label_group: [
            { request_headers: { key: 'x-allow', header_name: 'x-allow', omit_if_not_present: false } },
          ],
        },
      ],
    });
    assert.ok(
      notesOf(result, 'backend').includes(
        "spec.labels.shop.0.request_label_group.0: x-allow dropped, as Kubernetes prunes a key the label's schema does not know: read as the action beside it, as Emissary reads it",
      ),
    );
  });

  it('is refused in an annotation, which no Kubernetes schema prunes, as Emissary refuses it', () => {
    const text = `apiVersion: v1\nkind: Service\nmetadata:\n  name: backend\n  annotations:\n    getambassador.io/config: |\n${resource(
      'annotation',
    )
      .split('\n')
      .map((l) => `      ${l}`)
      .join('\n')}\n`;
    assert.match(
      problems(text)[0],
      /labels\.shop\.0\.request_label_group\.0: has 2 keys \(x-allow, request_headers\) where a label has one/,
    );
  });
});
