/**
 * Emissary's AuthService, in either form, with a real auth service over
 * HTTP: what it is asked, what the upstream gets of its answer, and the
 * defaults of Emissary's that a record leaving a field out gets.
 */
import assert from 'node:assert/strict';
import { allowAlice, startExtAuthzServer, type ExtAuthzServer } from '../../../support/ext-authz-server';
import { close } from '../../../support/server';
import { recordingUpstream } from '../../../support/upstreams';
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
  type EmissaryRig,
} from '../../../support/emissary';

type Recording = Awaited<ReturnType<typeof recordingUpstream>>;

for (const form of FORMS) {
  describe(`Emissary AuthService, written as ${form === 'resource' ? 'a v3alpha1 resource' : 'a v2 record of the annotation'}`, () => {
    let auth: Recording;
    let rig: EmissaryRig;

    before(async () => {
      auth = await recordingUpstream((req, res) => {
        if (req.headers['x-accepted']) res.writeHead(204).end();
        else if (req.headers['x-deny'])
          res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('who are you?');
        else res.writeHead(200, { 'x-user': 'alice', 'x-extra': 'e', 'x-travel-user': 'mallory' }).end();
      });
      rig = await emissaryRig((up) =>
        written(
          form,
          {
            kind: 'AuthService',
            name: 'authentication',
            spec: {
              auth_service: `127.0.0.1:${auth.port}`,
              path_prefix: '/check',
              allowed_request_headers: ['x-tenant', 'x-deny', 'x-accepted'],
              allowed_authorization_headers: ['x-user'],
              status_on_error: { code: 503 },
              proto: 'http',
              timeout_ms: 5000,
            },
          },
          routeTo(up, 'orders', { prefix: '/orders/' }),
          routeTo(up, 'open', { prefix: '/open/', bypass_auth: true }),
        ),
      );
    });
    after(async () => {
      await rig?.close();
      await close(auth?.server);
    });

    it('asks the auth service at path_prefix and the path, with the allowed request headers', async () => {
      const before = auth.received.length;
      await rig.call('/orders/7?full=1', { headers: { 'X-Tenant': 'acme', 'X-Other': 'no' } });
      const asked = auth.received[before];
      assert.deepEqual(
        [asked.url, asked.headers['x-tenant'], asked.headers['x-other']],
        ['/check/orders/7?full=1', 'acme', undefined],
      );
    });

    it("passes the allowed authorization headers of the answer on, replacing the client's, and no other", async () => {
      const res = await rig.call('/orders/7', { headers: { 'X-User': 'mallory' } });
      assert.deepEqual([res.status, res.route], [200, 'orders']);
      assert.deepEqual(
        [res.received?.headers['x-user'], res.received?.headers['x-extra'], res.received?.headers['x-travel-user']],
        ['alice', undefined, undefined],
      );
    });

    it('lets only a 200 through: any other 2xx of the auth service is its answer to the client, as Emissary documents', async () => {
      const res = await rig.call('/orders/7', { headers: { 'X-Accepted': '1' } });
      assert.deepEqual([res.status, res.received], [204, undefined]);
    });

    it("gives the client the auth service's refusal, and asks nothing for a Mapping that bypasses auth", async () => {
      const refused = await rig.call('/orders/7', { headers: { 'X-Deny': '1' } });
      assert.deepEqual(
        [refused.status, refused.answer.text, refused.answer.headers['www-authenticate'], refused.received],
        [401, 'who are you?', 'Bearer', undefined],
      );
      const before = auth.received.length;
      assert.equal((await rig.call('/open/x')).route, 'open');
      assert.equal(auth.received.length, before);
    });
  });
}

for (const form of FORMS) {
  describe(`Emissary AuthService with proto: grpc, written as ${form === 'resource' ? 'a v3alpha1 resource' : 'a v2 record of the annotation'}`, () => {
    let authz: ExtAuthzServer;
    let rig: EmissaryRig;

    before(async () => {
      authz = await startExtAuthzServer();
      rig = await emissaryRig((up) =>
        written(
          form,
          {
            kind: 'AuthService',
            name: 'authentication',
            spec: {
              auth_service: authz.address,
              proto: 'grpc',
              protocol_version: 'v3',
              include_body: { max_bytes: 100, allow_partial: true },
            },
          },
          routeTo(up, 'orders', { prefix: '/orders/', auth_context_extensions: { tenant: 'acme' } }),
        ),
      );
    });
    beforeEach(() => {
      authz.received.length = 0;
      authz.answer = allowAlice;
    });
    after(async () => {
      await rig?.close();
      await authz?.close();
    });

    it("checks each request with the Mapping's context extensions, and passes on the user the answer names", async () => {
      const res = await rig.call('/orders/7?x=1', { headers: { 'X-Travel-User': 'mallory' } });
      assert.deepEqual([res.status, res.route, res.received?.headers['x-travel-user']], [200, 'orders', 'alice']);
      const { attributes } = authz.received[0];
      assert.deepEqual(
        [attributes.context_extensions, attributes.request.http.path],
        [{ tenant: 'acme' }, '/orders/7?x=1'],
      );
    });

    it('gives the client a refusal and never calls the upstream', async () => {
      authz.answer = () => ({ status: { code: 16 }, denied_response: { status: { code: 'Forbidden' }, body: 'no' } });
      const res = await rig.call('/orders/7');
      assert.deepEqual([res.status, res.answer.text, res.received], [403, 'no', undefined]);
    });
  });
}

describe('Emissary AuthService fields', () => {
  const authOf = (spec: Record<string, unknown>) => ({
    kind: 'AuthService',
    name: 'authentication',
    spec: { auth_service: 'auth.example:3000', ...spec },
  });

  it("passes on, when it names no allowed_authorization_headers, none of the answer's headers but Envoy's own, as Emissary does", () => {
    const result = loaded(asResources(authOf({})));
    assert.deepEqual(result.config.authService?.allowed_authorization_headers, []);
    assert.ok(
      notesOf(result, 'authentication').some((n) =>
        n.startsWith('spec.allowed_authorization_headers: not set: none, as in Emissary'),
      ),
    );
  });

  it("reads v2's tls: true and a TLSContext's name, saying it is called as that context says, and drops stats_name and v2ExplicitTLS with a note", () => {
    const v2 = loaded(asAnnotation('s', authOf({ tls: true, stats_name: 'auth' })));
    assert.equal(v2.config.authService?.tls, true);
    assert.ok(
      notesOf(v2, 'authentication').includes('stats_name: ignored: decisions are counted in the Prometheus metrics'),
    );
    assert.equal(
      loaded(asResources(authOf({ tls: '', v2ExplicitTLS: { tls: 'string' } }))).config.authService?.tls,
      undefined,
    );
    const named = loaded(asResources(authOf({ tls: 'auth-ctx' })));
    assert.equal(named.config.authService?.tls, 'auth-ctx');
    assert.ok(
      notesOf(named, 'authentication').some((n) => n.startsWith('spec.tls: names a TLSContext: TLS to the service')),
    );
    assert.match(
      problems(asResources(authOf({ tls: 'auth-ctx', auth_service: 'http://auth:3000' })))[0],
      /spec.tls: a TLSContext contradicts the http:\/\/ of auth_service/,
    );
  });

  it('reads proto: grpc, takes v3 when protocol_version is left out, and refuses v2 with the reason', () => {
    const grpcAuth = loaded(asResources(authOf({ proto: 'grpc' })));
    assert.equal(grpcAuth.config.authService?.proto, 'grpc');
    assert.ok(notesOf(grpcAuth, 'authentication').some((n) => n.startsWith('spec.protocol_version: not set: v3')));
    assert.match(
      problems(asAnnotation('s', authOf({ proto: 'grpc', protocol_version: 'v2' })))[0],
      /protocol_version: must be v3 for proto: grpc/,
    );
  });

  it('ignores for proto: grpc, with a note, the fields Emissary writes into an HTTP check alone', () => {
    const grpcAuth = loaded(
      asResources(
        authOf({
          proto: 'grpc',
          path_prefix: '/extauth',
          add_auth_headers: { 'x-from': 'edge' },
          add_linkerd_headers: true,
        }),
      ),
    );
    const record = grpcAuth.config.authService!;
    assert.deepEqual([record.path_prefix, record.add_auth_headers, record.add_linkerd_headers], ['', {}, false]);
    const notes = notesOf(grpcAuth, 'authentication');
    for (const field of ['path_prefix', 'add_auth_headers', 'add_linkerd_headers']) {
      assert.ok(
        notes.some((n) => n.startsWith(`spec.${field}: ignored for proto: grpc, as in Emissary`)),
        field,
      );
    }
  });

  it("qualifies the auth service's Kubernetes name with the namespace", () => {
    const result = loaded(asResources({ ...authOf({ auth_service: 'example-auth:3000' }), namespace: 'security' }));
    assert.equal(result.config.authService?.auth_service, 'example-auth.security:3000');
  });
});

describe('Emissary RateLimitService fields', () => {
  const rlsOf = (spec: Record<string, unknown>) => ({
    kind: 'RateLimitService',
    name: 'limits',
    spec: { service: 'ratelimit.example:8081', ...spec },
  });

  it("asks under Emissary's domain ambassador when it names none, and under its own when it does", () => {
    assert.equal(loaded(asResources(rlsOf({}))).config.rateLimitService?.domain, 'ambassador');
    assert.equal(loaded(asAnnotation('s', rlsOf({ domain: 'shop' }))).config.rateLimitService?.domain, 'shop');
  });

  it('reads tls (true or a TLSContext), keeps grpc.use_resource_exhausted_code, and refuses protocol_version v2', () => {
    const v2 = loaded(asAnnotation('s', rlsOf({ tls: true, grpc: { use_resource_exhausted_code: true } })));
    assert.deepEqual(
      [v2.config.rateLimitService?.tls, v2.config.rateLimitService?.grpc],
      [true, { use_resource_exhausted_code: true }],
    );
    const named = loaded(asResources(rlsOf({ tls: 'rls-ctx' })));
    assert.equal(named.config.rateLimitService?.tls, 'rls-ctx');
    assert.ok(
      notesOf(named, 'limits').some((n) =>
        n.startsWith("spec.tls: names a TLSContext: TLS to the service with the context's client certificate"),
      ),
    );
    assert.match(
      problems(asResources(rlsOf({ protocol_version: 'v2' })))[0],
      /RateLimitService limits: spec.protocol_version: must be v3/,
    );
    assert.equal(
      loaded(asResources(rlsOf({ tls: '', stats_name: 'rl' }))).config.rateLimitService?.service,
      'ratelimit.example:8081',
    );
  });

  it("gives a service without a port Emissary's default: 80, or 443 with TLS", () => {
    const plain = loaded(asResources({ ...rlsOf({ service: 'ratelimit' }), namespace: 'limits' }));
    assert.equal(plain.config.rateLimitService?.service, 'ratelimit.limits:80');
    assert.ok(
      notesOf(plain, 'limits').includes("spec.service: no port: 80, Emissary's default for a service without TLS"),
    );
    assert.equal(
      loaded(asAnnotation('s', rlsOf({ service: 'ratelimit.example', tls: true }))).config.rateLimitService?.service,
      'ratelimit.example:443',
    );
  });
});
