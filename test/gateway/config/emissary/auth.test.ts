/**
 * Emissary's AuthService, in either form, with a real auth service over
 * HTTP: what it is asked, what the upstream gets of its answer, and the
 * defaults of Emissary's that a record leaving a field out gets.
 */
import assert from 'node:assert/strict';
import { close, recordingUpstream } from '../../helpers';
import { asAnnotation, asResources, emissaryRig, FORMS, loaded, notesOf, problems, routeTo, written, type EmissaryRig } from './support';

type Recording = Awaited<ReturnType<typeof recordingUpstream>>;

for (const form of FORMS) {
  describe(`Emissary AuthService, written as ${form === 'resource' ? 'a v3alpha1 resource' : 'a v2 record of the annotation'}`, () => {
    let auth: Recording;
    let rig: EmissaryRig;

    before(async () => {
      auth = await recordingUpstream((req, res) => {
        if (req.headers['x-deny']) res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('who are you?');
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
              allowed_request_headers: ['x-tenant', 'x-deny'],
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
      assert.deepEqual([asked.url, asked.headers['x-tenant'], asked.headers['x-other']], ['/check/orders/7?full=1', 'acme', undefined]);
    });

    it("passes the allowed authorization headers of the answer on, replacing the client's, and no other", async () => {
      const res = await rig.call('/orders/7', { headers: { 'X-User': 'mallory' } });
      assert.deepEqual([res.status, res.route], [200, 'orders']);
      assert.deepEqual([res.received?.headers['x-user'], res.received?.headers['x-extra'], res.received?.headers['x-travel-user']], ['alice', undefined, undefined]);
    });

    it("gives the client the auth service's refusal, and asks nothing for a Mapping that bypasses auth", async () => {
      const refused = await rig.call('/orders/7', { headers: { 'X-Deny': '1' } });
      assert.deepEqual([refused.status, refused.answer.text, refused.answer.headers['www-authenticate'], refused.received], [401, 'who are you?', 'Bearer', undefined]);
      const before = auth.received.length;
      assert.equal((await rig.call('/open/x')).route, 'open');
      assert.equal(auth.received.length, before);
    });
  });
}

describe('Emissary AuthService fields', () => {
  const authOf = (spec: Record<string, unknown>) => ({ kind: 'AuthService', name: 'authentication', spec: { auth_service: 'auth.example:3000', ...spec } });

  it("passes on, when it names no allowed_authorization_headers, none of the answer's headers but Envoy's own, as Emissary does", () => {
    const result = loaded(asResources(authOf({})));
    assert.deepEqual(result.config.authService?.allowed_authorization_headers, []);
    assert.ok(notesOf(result, 'authentication').some((n) => n.startsWith('spec.allowed_authorization_headers: not set: none, as in Emissary')));
  });

  it("reads v2's tls: true and a TLSContext's name, and drops stats_name and v2ExplicitTLS with a note", () => {
    const v2 = loaded(asAnnotation('s', authOf({ tls: true, stats_name: 'auth' })));
    assert.equal(v2.config.authService?.tls, true);
    assert.ok(notesOf(v2, 'authentication').includes('stats_name: ignored: decisions are counted in the Prometheus metrics'));
    assert.equal(loaded(asResources(authOf({ tls: '', v2ExplicitTLS: { tls: 'string' } }))).config.authService?.tls, undefined);
    assert.equal(loaded(asResources(authOf({ tls: 'auth-ctx' }))).config.authService?.tls, 'auth-ctx');
  });

  it("qualifies the auth service's Kubernetes name with the namespace", () => {
    const result = loaded(asResources({ ...authOf({ auth_service: 'example-auth:3000' }), namespace: 'security' }));
    assert.equal(result.config.authService?.auth_service, 'example-auth.security:3000');
  });
});

describe('Emissary RateLimitService fields', () => {
  const rlsOf = (spec: Record<string, unknown>) => ({ kind: 'RateLimitService', name: 'limits', spec: { service: 'ratelimit.example:8081', ...spec } });

  it("asks under Emissary's domain ambassador when it names none, and under its own when it does", () => {
    assert.equal(loaded(asResources(rlsOf({}))).config.rateLimitService?.domain, 'ambassador');
    assert.equal(loaded(asAnnotation('s', rlsOf({ domain: 'shop' }))).config.rateLimitService?.domain, 'shop');
  });

  it('reads TLS to the rate-limit service (true, or a TLSContext), and refuses protocol_version v2', () => {
    assert.equal(loaded(asAnnotation('s', rlsOf({ tls: true }))).config.rateLimitService?.tls, true);
    assert.equal(loaded(asResources(rlsOf({ tls: 'limits-ctx' }))).config.rateLimitService?.tls, 'limits-ctx');
    assert.match(problems(asResources(rlsOf({ protocol_version: 'v2' })))[0], /RateLimitService limits: spec.protocol_version: must be v3/);
    assert.equal(loaded(asResources(rlsOf({ tls: '', stats_name: 'rl' }))).config.rateLimitService?.service, 'ratelimit.example:8081');
  });
});
