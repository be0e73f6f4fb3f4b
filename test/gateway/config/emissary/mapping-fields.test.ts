/**
 * What each field of an Emissary Mapping becomes: the fields of the same
 * meaning unchanged, v2's spellings and v3alpha1's memories of them read as
 * the gateway's, the upstream settings passed on as written, the fields
 * that change nothing dropped with a note, the others refused by name.
 */
import assert from 'node:assert/strict';
import { readEmissaryDocument } from '../../../../src/gateway/config/emissary';
import { parse } from 'yaml';
import {
  asAnnotation,
  asResources,
  emissaryRig,
  FORMS,
  loaded,
  notesOf,
  problems,
  routeTo,
  written,
  type Fixture,
} from '../../../support/emissary';

const base = { prefix: '/quote/', service: '127.0.0.1:9001' };
const quote = (spec: Record<string, unknown>, apiVersion?: string): Fixture => ({
  kind: 'Mapping',
  name: 'quote',
  spec: { ...base, ...spec },
  ...(apiVersion ? { apiVersion } : {}),
});
const record = (text: string) => loaded(text).config.mappings[0];

describe('Emissary Mapping fields', () => {
  it('passes the fields of the same meaning unchanged, in either form', () => {
    const spec = {
      rewrite: '/api/',
      timeout_ms: 750,
      bypass_auth: true,
      precedence: -1,
      method: 'put',
      headers: { 'x-shop': 'north' },
      query_parameters: { lang: 'fr' },
      weight: 30,
      allow_upgrade: ['websocket'],
      docs: { path: '/openapi.json' },
      cors: { origins: ['https://app.example'], methods: ['GET'], max_age: '600' },
      labels: {
        ambassador: [
          { tier: [{ request_headers: { key: 'tier', header_name: 'x-tier', omit_if_not_present: true } }] },
        ],
      },
    };
    for (const form of FORMS) {
      const m = record(written(form, quote(spec)));
      assert.deepEqual(
        [
          m.rewrite,
          m.timeout_ms,
          m.bypass_auth,
          m.precedence,
          m.method,
          m.headers,
          m.query_parameters,
          m.weight,
          m.allow_upgrade,
          m.docs,
          m.cors?.origins,
          m.labels?.ambassador,
        ],
        [
          '/api/',
          750,
          true,
          -1,
          'PUT',
          { 'x-shop': 'north' },
          { lang: 'fr' },
          30,
          ['websocket'],
          { path: '/openapi.json' },
          ['https://app.example'],
          spec.labels.ambassador,
        ],
        form,
      );
    }
  });

  it("passes the upstream settings on as written, for the gateway's upstreams to read", () => {
    const settings = {
      retry_policy: { retry_on: '5xx', num_retries: 2 },
      circuit_breakers: [{ max_connections: 10 }],
      connect_timeout_ms: 500,
      idle_timeout_ms: 30000,
      cluster_idle_timeout_ms: 60000,
      load_balancer: { policy: 'least_request' },
      resolver: 'endpoint',
    };
    const [entry] = readEmissaryDocument(
      {
        apiVersion: 'getambassador.io/v3alpha1',
        kind: 'Mapping',
        metadata: { name: 'quote' },
        spec: { ...base, ...settings },
      },
      { source: { file: 'f' }, index: 1 },
    )!;
    assert.deepEqual(entry.value, { apiVersion: 'gateway/v1', kind: 'Mapping', name: 'quote', ...base, ...settings });
  });

  it("reads v2's host as hostname (a glob), or as a pattern with host_regex, and v3alpha1's host as it is", () => {
    const glob = loaded(asAnnotation('s', quote({ host: '*.shop.example' })));
    assert.deepEqual([glob.config.mappings[0].hostname, glob.config.mappings[0].host], ['*.shop.example', undefined]);
    assert.ok(notesOf(glob, 'quote').some((n) => n.startsWith('host: read as hostname')));
    const pattern = record(asAnnotation('s', quote({ host: '[a-z]+\\.shop\\.example', host_regex: true })));
    assert.deepEqual(
      [pattern.host, pattern.host_regex, pattern.hostname],
      ['[a-z]+\\.shop\\.example', true, undefined],
    );
    assert.equal(
      record(asAnnotation('s', quote({ host: 'shop.example', host_regex: false }))).hostname,
      'shop.example',
    );
    assert.equal(record(asResources(quote({ host: 'shop.example' }))).host, 'shop.example');
  });

  it("reads v2's tls: true as the https:// of the service, and a name as the TLSContext it is called with", () => {
    assert.equal(
      record(asAnnotation('s', quote({ service: 'quote.shop:8443', tls: true }))).service,
      'https://quote.shop:8443',
    );
    assert.equal(
      record(asAnnotation('s', quote({ service: 'http://quote.shop', tls: true }))).service,
      'https://quote.shop',
    );
    assert.equal(record(asAnnotation('s', quote({ tls: false }))).service, base.service);
    assert.equal(record(asResources(quote({ tls: '' }))).service, base.service);
    assert.equal(record(asResources(quote({ tls: 'upstream-ctx' }))).tls, 'upstream-ctx');
    assert.deepEqual(problems(asResources(quote({ service: 'http://quote.shop', tls: 'upstream-ctx' }))), [
      'config/emissary.yaml: Mapping quote: spec.tls: a TLSContext contradicts the http:// of service',
    ]);
  });

  it('reads the memories v3alpha1 keeps of v2 spellings: v2BoolQueryParameters, v2Representation, v2CommaSeparatedOrigins, v2ExplicitTLS', () => {
    const text = asResources(
      quote({
        v2BoolQueryParameters: ['debug'],
        regex_query_parameters: { debug: '.*', page: '[0-9]+' },
        add_request_headers: {
          'x-a': { value: 'one', v2Representation: 'string' },
          'x-b': { v2Representation: 'null' },
        },
        cors: { origins: ['https://a.example', 'https://b.example'], v2CommaSeparatedOrigins: true },
        v2ExplicitTLS: { tls: 'bool:false' },
      }),
    );
    const result = loaded(text);
    const m = result.config.mappings[0];
    assert.deepEqual([m.query_parameters, m.regex_query_parameters], [{ debug: true }, { page: '[0-9]+' }]);
    assert.deepEqual(m.add_request_headers, {
      'x-a': { value: 'one', append: true },
      'x-b': { value: '', append: true },
    });
    assert.deepEqual(m.cors?.origins, ['https://a.example', 'https://b.example']);
    assert.ok(notesOf(result, 'quote').some((n) => n.startsWith('spec.v2ExplicitTLS: ignored')));
  });

  it("reads v2's longhand generic_key with v3Key, comma-separated origins and a header without value", () => {
    const m = record(
      asAnnotation(
        's',
        quote({
          labels: {
            ambassador: [
              { catalog: [{ generic_key: 'quote', v3Key: 'service' }, { generic_key: 'plain' }, 'remote_address'] },
            ],
          },
          cors: { origins: 'https://a.example,https://b.example' },
          add_request_headers: { 'x-empty': null },
          headers: { 'x-shop': 'north', 'x-never': false },
        }),
      ),
    );
    assert.deepEqual(m.labels?.ambassador, [
      { catalog: [{ generic_key: { key: 'service', value: 'quote' } }, { generic_key: 'plain' }, 'remote_address'] },
    ]);
    assert.equal(m.cors?.origins, 'https://a.example,https://b.example');
    assert.deepEqual(
      [m.add_request_headers['x-empty'], m.headers],
      [{ value: '', append: true }, { 'x-shop': 'north' }],
    );
  });

  it('drops with a note the fields that change nothing here, and refuses those it cannot serve, by name', () => {
    const result = loaded(
      asResources(
        quote({
          stats_name: 'q',
          auth_context_extensions: { team: 'a' },
          grpc: false,
          auto_host_rewrite: false,
          docs: { path: '/openapi.json' },
        }),
      ),
    );
    const notes = notesOf(result, 'quote');
    for (const field of ['stats_name', 'auth_context_extensions', 'grpc', 'auto_host_rewrite', 'docs']) {
      assert.ok(
        notes.some((n) => n.startsWith(`spec.${field}: `)),
        field,
      );
    }
    assert.ok(
      notesOf(loaded(asAnnotation('s', quote({ v3StatsName: 'q' }))), 'quote').some((n) =>
        n.startsWith('v3StatsName: ignored'),
      ),
    );
    assert.deepEqual(
      problems(asResources(quote({ health_checks: [{ health_check: { http: { path: '/' } } }], grpc: true }))),
      [
        'config/emissary.yaml: Mapping quote: spec.health_checks: not supported: upstreams are not health-checked actively; remove the field',
      ],
    );
    assert.match(
      problems(asAnnotation('s', quote({ envoy_override: { priority: 'HIGH' } })))[0],
      /Mapping quote: envoy_override: an Emissary field not supported here/,
    );
  });

  it("takes a resolver named kubernetes-service, Emissary's default and what the gateway does, and refuses any other with what to write instead", () => {
    for (const form of FORMS)
      assert.equal(record(written(form, quote({ resolver: 'kubernetes-service' }))).prefix, '/quote/', form);
    assert.deepEqual(problems(asResources(quote({ resolver: 'endpoint' }))), [
      'config/emissary.yaml: Mapping quote: spec.resolver: an Emissary field not supported here but for kubernetes-service, its default: names are looked up in DNS as Kubernetes resolves a Service; list addresses in endpoints, or remove the field',
    ]);
  });

  it("adds Linkerd's l5d-dst-override with the service's host and port, as Emissary does", () => {
    const m = record(
      asResources({ ...quote({ service: 'quote:8080', add_linkerd_headers: true }), namespace: 'shop' }),
    );
    assert.deepEqual(m.add_request_headers['l5d-dst-override'], { value: 'quote.shop:8080', append: false });
    assert.equal(
      record(asResources(quote({ service: 'https://api.example', add_linkerd_headers: true }))).add_request_headers[
        'l5d-dst-override'
      ].value,
      'api.example:443',
    );
    assert.equal(
      record(asResources(quote({ add_linkerd_headers: false }))).add_request_headers['l5d-dst-override'],
      undefined,
    );
  });

  it("notes where the gateway matches or forwards otherwise than Emissary, with the setting that gives Emissary's match", () => {
    const notes = notesOf(loaded(asResources(quote({ prefix: '/quote' }))), 'quote');
    assert.ok(
      notes.includes(
        "spec.prefix: matches on segment boundaries: /quote matches /quote/x, not /quotex (Emissary: any path that starts with it); for Emissary's match write prefix_regex: true with prefix: '/quote.*' and regex_rewrite: {pattern: '^/quote/?(.*)$', substitution: '/\\1'}, since with a pattern rewrite replaces the whole path",
      ),
      notes.join('\n'),
    );
    assert.ok(
      notes.some((n) =>
        n.startsWith(
          "spec.auto_host_rewrite: not set: a remote upstream is sent its own host:port as Host, where Emissary sends the client's",
        ),
      ),
    );
    const plain = notesOf(loaded(asResources(quote({ host_rewrite: 'quote.internal' }))), 'quote');
    assert.deepEqual(
      plain.filter((n) => /prefix|auto_host_rewrite/.test(n)),
      [],
    );
  });

  it("gives advice for Emissary's prefix match that, written as it says, forwards the paths the prefix forwarded, and those Emissary adds", async () => {
    for (const [rewrite, forwarded] of [
      [undefined, ['/today', '/x/y']],
      ['/v2/', ['/v2/today', '/v2/x/y']],
      ['', ['/quote.v1/today', '/quote.v1x/y']],
    ] as const) {
      const spec = { prefix: '/quote.v1', ...(rewrite === undefined ? {} : { rewrite }) };
      const [note] = notesOf(loaded(asResources(quote(spec))), 'quote').filter((n) => n.startsWith('spec.prefix:'));
      const advised: Record<string, unknown> = {
        prefix: parse(/prefix: ('[^']*')/.exec(note)![1]),
        prefix_regex: true,
      };
      const regexRewrite = / and regex_rewrite: (\{.*\}), since/.exec(note);
      if (regexRewrite) advised.regex_rewrite = parse(regexRewrite[1]);
      else advised.rewrite = rewrite;
      const rig = await emissaryRig((up) => asResources(routeTo(up, 'quote', advised)));
      try {
        const received = [
          (await rig.call('/quote.v1/today')).received?.url,
          (await rig.call('/quote.v1x/y')).received?.url,
        ];
        assert.deepEqual(received, forwarded, note);
      } finally {
        await rig.close();
      }
    }
  });
});
