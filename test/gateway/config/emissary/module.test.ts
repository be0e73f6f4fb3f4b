/**
 * Emissary's ambassador Module: its defaults in every Mapping without its
 * own, its gateway-wide settings, and each other field ignored or refused
 * by name.
 */
import assert from 'node:assert/strict';
import { createGateway } from '../../../../src/gateway';
import { close, listen } from '../../../support/server';
import { echoModule, registry } from '../../../support/modules';
import { recordingUpstream } from '../../../support/upstreams';
import { send } from '../../../support/client';
import {
  asAnnotation,
  asResources,
  emissaryRig,
  FORMS,
  loaded,
  notesOf,
  problems,
  written,
  type Fixture,
} from '../../../support/emissary';

const moduleOf = (config: Record<string, unknown>, name = 'ambassador'): Fixture => ({
  kind: 'Module',
  name,
  spec: { config },
});
const quote = (name: string, spec: Record<string, unknown> = {}): Fixture => ({
  kind: 'Mapping',
  name,
  spec: { prefix: `/${name}/`, service: '127.0.0.1:9001', ...spec },
});

describe("Emissary's ambassador Module", () => {
  for (const form of FORMS) {
    it(`gives its defaults' header edits to every Mapping without its own, in the ${form} form`, async () => {
      const defaults = {
        add_request_headers: { 'x-from': 'top-level' },
        remove_request_headers: ['x-secret'],
        httpmapping: {
          add_request_headers: { 'x-from': 'httpmapping' },
          add_response_headers: { 'x-policy': 'default' },
          timeout_ms: 5,
        },
      };
      const rig = await emissaryRig((up) =>
        written(
          form,
          moduleOf({ defaults }),
          { kind: 'Mapping', name: 'plain', spec: { prefix: '/plain/', service: up } },
          {
            kind: 'Mapping',
            name: 'own',
            spec: { prefix: '/own/', service: up, add_request_headers: {}, remove_request_headers: [] },
          },
        ),
      );
      try {
        const plain = await rig.call('/plain/x', { headers: { 'X-Secret': 's' } });
        assert.deepEqual(
          [plain.received?.headers['x-from'], plain.received?.headers['x-secret'], plain.answer.headers['x-policy']],
          ['httpmapping', undefined, 'default'],
        );
        const own = await rig.call('/own/x', { headers: { 'X-Secret': 's' } });
        assert.deepEqual(
          [own.received?.headers['x-from'], own.received?.headers['x-secret'], own.answer.headers['x-policy']],
          [undefined, 's', 'default'],
        );
      } finally {
        await rig.close();
      }
    });
  }

  it('notes the defaults no Mapping takes, as Emissary takes none of them either', () => {
    const result = loaded(
      asResources(moduleOf({ defaults: { httpmapping: { timeout_ms: 5 }, tcpmapping: { idle_timeout_ms: 1 } } })),
    );
    assert.deepEqual(notesOf(result, 'ambassador'), [
      'spec.config.defaults.httpmapping.timeout_ms: ignored: Mappings take only add_request_headers, add_response_headers, remove_request_headers, remove_response_headers from defaults, in Emissary too',
      'spec.config.defaults.tcpmapping: ignored: only Mappings read defaults, from the httpmapping class or the top level, in Emissary too',
    ]);
  });

  it("gives cluster_request_timeout_ms as the timeout_ms of every Mapping without its own, the gateway's own Mappings too", () => {
    const own = 'apiVersion: gateway/v1\nkind: Mapping\nname: gateway-own\nprefix: /g/\nservice: 127.0.0.1:9\n';
    const result = loaded(
      `${asResources(moduleOf({ cluster_request_timeout_ms: 9000 }), quote('slow'), quote('quick', { timeout_ms: 200 }))}---\n${own}`,
    );
    assert.deepEqual(
      result.config.mappings.map((m) => [m.name, m.timeout_ms]),
      [
        ['slow', 9000],
        ['quick', 200],
        ['gateway-own', 9000],
      ],
    );
  });

  it("keeps the CORS policy and regex_max_size as the gateway's Module", () => {
    const result = loaded(
      asAnnotation(
        's',
        moduleOf({ cors: { origins: 'https://app.example', v2CommaSeparatedOrigins: true }, regex_max_size: 400 }),
      ),
    );
    assert.deepEqual(result.config.module?.config, {
      cors: { origins: 'https://app.example', credentials: false },
      regex_max_size: 400,
    });
  });

  it('adds the Linkerd header to every Mapping with add_linkerd_headers, unless a Mapping says false', () => {
    const result = loaded(
      asResources(
        moduleOf({ add_linkerd_headers: true }),
        quote('a', { service: 'quote:8080' }),
        quote('b', { add_linkerd_headers: false }),
      ),
    );
    assert.deepEqual(
      result.config.mappings.map((m) => m.add_request_headers['l5d-dst-override']?.value),
      ['quote:8080', undefined],
    );
  });

  it('leaves Kubernetes names unqualified with use_ambassador_namespace_for_service_resolution', () => {
    const text = asResources(moduleOf({ use_ambassador_namespace_for_service_resolution: true }), {
      ...quote('q', { service: 'quote' }),
      namespace: 'shop',
    });
    assert.equal(loaded(text).config.mappings[0].service, 'quote');
  });

  it('gives its upstream settings to the remote upstream of every Mapping without its own, and none to a module called in process', async () => {
    let failures = 0;
    const up = await recordingUpstream((req, res) => {
      res.statusCode = req.url === '/flaky' && failures++ === 0 ? 503 : 200;
      res.end();
    });
    const service = `127.0.0.1:${up.port}`;
    const result = loaded(
      asResources(
        moduleOf({ retry_policy: { retry_on: '5xx', num_retries: 1 }, circuit_breakers: [{ max_connections: 5 }] }),
        { kind: 'Mapping', name: 'remote', spec: { prefix: '/remote/', service } },
        {
          kind: 'Mapping',
          name: 'own',
          spec: { prefix: '/own/', service, retry_policy: { retry_on: 'connect-failure' } },
        },
        { kind: 'Mapping', name: 'local', spec: { prefix: '/local/', service: 'echo' } },
      ),
    );
    const gateway = createGateway({ config: result.config, modules: registry(echoModule('echo')) });
    const { server, url } = await listen(gateway.app.callback());
    try {
      assert.equal((await send(url, '/remote/flaky')).status, 200, 'tried again after the 503, as the Module says');
      assert.equal(up.received.length, 2);
      failures = 0;
      assert.equal(
        (await send(url, '/own/flaky')).status,
        503,
        "the Mapping's own retry_policy, which does not try a 503 again",
      );
      assert.equal((await send(url, '/local/x')).status, 200);
      const routes = new Map(gateway.snapshot().routes.map((r) => [r.name, r]));
      assert.deepEqual(routes.get('remote')?.upstream, {
        retry_policy: { retry_on: '5xx', num_retries: 1 },
        circuit_breakers: [{ priority: 'default', max_connections: 5 }],
      });
      assert.equal(routes.get('local')?.target, 'in-process');
      assert.equal(routes.get('local')?.upstream, undefined);
    } finally {
      await close(server);
      await gateway.close();
      await close(up.server);
    }
  });

  it('says a problem of its upstream settings once, at the Module', () => {
    assert.deepEqual(
      problems(asResources(moduleOf({ retry_policy: { retry_on: '5xx,teapot' } }), quote('a'), quote('b'))),
      [
        "config/emissary.yaml: Module ambassador: spec.config.retry_policy.retry_on: 'teapot' is not a condition: write 5xx, gateway-error, connect-failure, retriable-4xx, refused-stream, reset or retriable-status-codes (several separated by commas) (given to every Mapping without its own retry_policy)",
      ],
    );
  });

  it('refuses by name the fields whose absence a client would feel, and an unknown field', () => {
    const config = {
      x_forwarded_proto_redirect: true,
      use_proxy_proto: false,
      lua_scripts: 'x',
      lightspeed: 1,
    };
    assert.deepEqual(problems(asResources(moduleOf(config))), [
      "config/emissary.yaml: Module ambassador: spec.config.x_forwarded_proto_redirect: not supported: a Host's requestPolicy.insecure.action: Redirect redirects plain HTTP to HTTPS; remove the field",
      'config/emissary.yaml: Module ambassador: spec.config.lua_scripts: not supported: there is no Envoy to run Lua scripts',
      "config/emissary.yaml: Module ambassador: spec.config.lightspeed: unknown field: not one of Emissary's ambassador Module",
    ]);
  });

  it('ignores with a note the settings of how Envoy runs, and those at their default', () => {
    const result = loaded(
      asResources(
        moduleOf({
          diag_port: 8877,
          envoy_log_type: 'json',
          gzip: { min_content_length: 32 },
          xff_num_trusted_hops: 1,
          enable_ipv6: false,
          grpc_stats: { all_methods: true },
        }),
      ),
    );
    assert.deepEqual(
      notesOf(result, 'ambassador').map((n) => n.slice(0, n.indexOf(': ignored'))),
      [
        'spec.config.diag_port',
        'spec.config.envoy_log_type',
        'spec.config.gzip',
        'spec.config.xff_num_trusted_hops',
        'spec.config.enable_ipv6',
        'spec.config.grpc_stats',
      ],
    );
  });

  it("reads forward_client_cert_details and set_current_client_cert_details, and refuses ALWAYS_FORWARD_ONLY, which would pass on any client's header", () => {
    for (const value of ['SANITIZE', 'FORWARD_ONLY', 'APPEND_FORWARD', 'SANITIZE_SET']) {
      const result = loaded(
        asResources(
          moduleOf({
            forward_client_cert_details: value,
            set_current_client_cert_details: { subject: true, uri: true },
          }),
        ),
      );
      assert.equal(result.config.module?.config.forward_client_cert_details, value);
      assert.deepEqual(result.config.module?.config.set_current_client_cert_details, { subject: true, uri: true });
    }
    const [always] = problems(asResources(moduleOf({ forward_client_cert_details: 'ALWAYS_FORWARD_ONLY' })));
    assert.match(
      always,
      /^config\/emissary\.yaml: Module ambassador: spec\.config\.forward_client_cert_details: not supported: ALWAYS_FORWARD_ONLY passes on any client's X-Forwarded-Client-Cert/,
    );
    assert.deepEqual(problems(asResources(moduleOf({ set_current_client_cert_details: { subjects: true } }))), [
      'config/emissary.yaml: Module ambassador: spec.config.set_current_client_cert_details.subjects: unknown field',
    ]);
  });

  it('refuses the tls Module, ignores a Module of another name as Emissary does, and refuses a second ambassador Module', () => {
    assert.deepEqual(problems(asResources(moduleOf({}, 'tls'))), [
      'config/emissary.yaml: Module tls: the tls Module is not read: write a Host with tlsSecret, or a TLSContext, for each certificate',
    ]);
    const other = loaded(asResources(moduleOf({ anything: 1 }, 'authentication')));
    assert.deepEqual(
      [other.config.module, other.emissary?.records[0].became],
      [undefined, 'nothing: Emissary reads only the Module named ambassador, and ignores this one too'],
    );
    assert.match(
      problems(`${asResources(moduleOf({}))}---\n${asAnnotation('s', moduleOf({}))}`)[0],
      /service s: Module ambassador: name: duplicate name: another Module is named 'ambassador'/,
    );
  });

  it("says a problem of a Mapping's label at its place in the Mapping, not counting the default_labels put before it", () => {
    const mapping = quote('echo', {
      labels: { gateway: [{ group: ['ok', { tier: { header: 'x-tier', bogus: 1 } }] }] },
    });
    const defaults = moduleOf({
      default_labels: { gateway: { defaults: [{ generic_key: { value: 'dflt' } }, 'remote_address'] } },
    });
    const alone = problems(asResources(mapping));
    assert.ok(
      alone.length > 0 && alone.every((p) => p.includes('spec.labels.gateway.0.group.1.tier')),
      alone.join('\n'),
    );
    assert.deepEqual(problems(asResources(mapping, defaults)), alone);
  });

  it('refuses default_labels that are not {<domain>: {defaults: [labels]}}, at the label', () => {
    assert.deepEqual(
      problems(asResources(moduleOf({ default_labels: { ambassador: { defaults: [{ a: 1, b: 2 }] }, other: ['x'] } }))),
      [
        'config/emissary.yaml: Module ambassador: spec.config.default_labels.ambassador.defaults.0: has 2 keys (a, b) where a label has one (a field written beside its label, not under it?): a label is a string (a generic_key value) or one key naming it: {<key>: {header}}, {request_headers: {key, header_name}}, {generic_key: {value}}, {remote_address: {}}...',
        'config/emissary.yaml: Module ambassador: spec.config.default_labels.other: expected {defaults: [<label>, ...]}',
      ],
    );
  });
});
