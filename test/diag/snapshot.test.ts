import assert from 'node:assert/strict';
import { describeGateway, renderDiagPage } from '../../src/diag';
import { mappingSchema } from '../../src/gateway/config/schema';
import { createRouteCounters } from '../../src/telemetry';
import { BUILT_IN, sampleConfig, sampleSnapshot } from '../support/diag-sample';

describe('diag/snapshot', () => {
  it('describes the routes in the order given, with their settings and counts', () => {
    const s = sampleSnapshot();
    assert.deepEqual(
      s.routes.map((r) => r.name),
      ['hotels', 'legacy', 'diag', '<script>alert(1)</script>'],
    );
    const [hotels, legacy, diag] = s.routes;
    assert.deepEqual(
      { ...hotels, labels: undefined },
      {
        name: 'hotels',
        prefix: '/v1/hotels/',
        rewrite: '/',
        service: 'hotel-booking',
        target: 'in-process',
        bypass_auth: false,
        precedence: 1,
        labels: undefined,
        requests: 4,
        errors: 1,
        clientErrors: 1,
      },
    );
    assert.equal(legacy.target, 'remote');
    assert.equal(legacy.rewrite, '');
    assert.equal(legacy.requests, 0);
    assert.deepEqual(legacy.headers, { 'x-canary': '<yes>', 'x-debug': true });
    assert.equal('headers' in hotels, false);
    assert.equal(diag.method, 'GET');
    assert.equal(diag.cors, true);
    assert.equal('method' in hotels, false);
  });

  describe('the host a route applies to', () => {
    function hostSnapshot() {
      const m = (fields: Record<string, unknown>) =>
        mappingSchema.parse({ apiVersion: 'gateway/v1', kind: 'Mapping', prefix: '/v1/', service: 'api', ...fields });
      const config = {
        mappings: [
          m({ name: 'tenants', hostname: '*.Example.com', case_sensitive: false }),
          m({ name: 'legacy', host: 'quote.example.com' }),
          m({
            name: 'httpbin',
            service: 'httpbin.internal:80',
            host_rewrite: 'httpbin.org',
            allow_upgrade: ['websocket'],
            retry_policy: { retry_on: 'gateway-error' },
            load_balancer: { policy: 'ring_hash', header: 'X-User' },
            allow_unsafe_path_escapes: true,
          }),
          m({ name: 'quickstart', hostname: '*', prefix: '/v0/' }),
          m({ name: 'service-named-api', namespace: 'shop', prefix: '/shop/' }),
        ],
        sources: [],
      };
      return describeGateway({
        version: '0',
        startedAt: new Date(),
        config,
        configDir: 'c',
        loadedAt: new Date(),
        modules: BUILT_IN,
      });
    }

    it('gives the hostname, a case-insensitive prefix, host_rewrite, allow_upgrade, allow_unsafe_path_escapes and the upstream fields, and nothing for any host', () => {
      const [tenants, legacy, httpbin, quickstart, named] = hostSnapshot().routes;
      assert.equal(quickstart.target, 'in-process');
      assert.equal(named.target, 'remote', 'a Mapping with a namespace names a Kubernetes Service');
      assert.deepEqual(named.upstream, { namespace: 'shop' });
      assert.equal(tenants.hostname, '*.example.com');
      assert.equal(tenants.case_sensitive, false);
      assert.equal(legacy.hostname, 'quote.example.com');
      assert.equal('case_sensitive' in legacy, false);
      assert.equal(httpbin.host_rewrite, 'httpbin.org');
      assert.deepEqual(httpbin.allow_upgrade, ['websocket']);
      assert.equal(httpbin.allow_unsafe_path_escapes, true);
      assert.deepEqual(httpbin.upstream, {
        retry_policy: { retry_on: 'gateway-error', num_retries: 1 },
        load_balancer: { policy: 'ring_hash', header: 'x-user' },
      });
      assert.equal('upstream' in quickstart, false);
      assert.equal('allow_upgrade' in quickstart, false);
      assert.equal('allow_unsafe_path_escapes' in quickstart, false);
      assert.equal('hostname' in quickstart, false);
      assert.equal('host_rewrite' in quickstart, false);
    });

    it('shows them on the page: the host in the Match column, "any case" and "unsafe escapes" by the prefix, the Host sent, the upgrades and the upstream fields by the service', () => {
      const rows = renderDiagPage(hostSnapshot()).split('<tr>').slice(2);
      assert.match(rows[0], /<td class="mono">\/v1\/ <span class="none">any case<\/span><\/td>/);
      assert.match(rows[2], /<td class="mono">\/v1\/ <span class="warn">unsafe escapes<\/span><\/td>/);
      assert.match(rows[0], /<li><span class="none">host<\/span> <code>\*\.example\.com<\/code><\/li>/);
      assert.match(rows[1], /<li><span class="none">host<\/span> <code>quote\.example\.com<\/code><\/li>/);
      assert.match(
        rows[2],
        /<td class="service">httpbin\.internal:80 <span class="none nowrap">remote<\/span><br><span class="none">Host:<\/span> <code>httpbin\.org<\/code><br><span class="none">upgrades:<\/span> <code>websocket<\/code><br><span class="none">upstream:<\/span> <code>retry gateway-error x1; lb ring_hash header x-user<\/code><\/td>/,
      );
      // Any method, any host, no header: the Match column says so in a word.
      assert.match(rows[3], /<\/td><td><span class="none">any<\/span><\/td><td><code>\/<\/code><\/td>/);
    });
  });

  it('describes the auth and rate-limit services with their failure modes', () => {
    const s = sampleSnapshot();
    assert.deepEqual(s.auth, {
      name: 'basic-auth',
      service: 'auth',
      target: 'in-process',
      failure_mode_allow: false,
      status_on_error: 403,
      timeout_ms: 5000,
      path_prefix: '',
      allowed_authorization_headers: ['x-travel-user'],
      allowed_request_headers: [],
    });
    assert.deepEqual(s.rateLimit, {
      name: 'limits',
      service: 'ratelimit.internal:8081',
      target: 'remote',
      domain: 'gateway',
      failure_mode_deny: true,
      timeout_ms: 20,
    });
  });

  it('gives uptime, the config files, the last reload errors and the totals', () => {
    const s = sampleSnapshot(['bad record']);
    assert.equal(s.version, '1.2.3');
    assert.equal(s.startedAt, '2025-01-01T00:00:00.000Z');
    assert.equal(s.uptimeSeconds, 86400 + 3 * 3600 + 4 * 60 + 5);
    assert.deepEqual(s.config, {
      dir: '/etc/gatehouse',
      sources: ['/etc/gatehouse/services.yaml', '/etc/gatehouse/extra.yaml'],
      loadedAt: '2025-01-01T00:00:01.000Z',
      errors: ['bad record'],
      lastReloadAt: '2025-01-02T00:00:00.000Z',
    });
    assert.deepEqual(s.counters, { requests: 5, errors: 1, clientErrors: 2 });
  });

  it('leaves out the services that are not configured, and counts zero without counters', () => {
    const config = { ...sampleConfig(), authService: undefined, rateLimitService: undefined };
    const s = describeGateway({
      version: '0',
      startedAt: new Date(),
      config,
      configDir: 'config',
      loadedAt: new Date(),
      modules: BUILT_IN,
    });
    assert.equal(s.auth, undefined);
    assert.equal(s.rateLimit, undefined);
    assert.equal('lastReloadAt' in s.config, false);
    assert.deepEqual(s.counters, { requests: 0, errors: 0, clientErrors: 0 });
    assert.ok(s.routes.every((r) => r.requests === 0));
  });

  it('is a copy: later requests do not change a snapshot already taken', () => {
    const counters = createRouteCounters();
    const d = {
      version: '0',
      startedAt: new Date(),
      config: sampleConfig(),
      configDir: 'c',
      loadedAt: new Date(),
      modules: BUILT_IN,
      counters,
    };
    const before = describeGateway(d);
    counters.record('hotels', 200);
    assert.equal(before.routes[0].requests, 0);
    assert.equal(before.counters.requests, 0);
    assert.equal(describeGateway(d).routes[0].requests, 1);
  });
});
