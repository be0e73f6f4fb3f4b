import assert from 'node:assert/strict';
import { createGateway, ConfigError } from '../../../src/gateway';
import { parseServiceAddress } from '../../../src/gateway/upstream/service';
import { configOf, mapping } from '../../support/records';
import { echoModule, registry } from '../../support/modules';
import { send } from '../../support/client';
import { testGateway, type TestGateway } from '../../support/reporting-gateway';
import { testResolver } from '../../support/resolver';
import { testUpstream, type TestUpstream } from '../../support/upstreams';

const K8S = { clusterDomain: 'cluster.local' };

describe('a service as Emissary writes it', () => {
  describe('read', () => {
    it('takes port 80 for a bare name, 443 with https://, and the port written otherwise', () => {
      const of = (s: string) => {
        const a = parseServiceAddress(s, K8S)!;
        return [a.secure, a.host, a.port, a.basePath];
      };
      assert.deepEqual(of('quote'), [false, 'quote', 80, '']);
      assert.deepEqual(of('quote:8080'), [false, 'quote:8080', 8080, '']);
      assert.deepEqual(of('http://quote'), [false, 'quote', 80, '']);
      assert.deepEqual(of('https://quote'), [true, 'quote', 443, '']);
      assert.deepEqual(of('https://quote.shop:8443/api/'), [true, 'quote.shop:8443', 8443, '/api']);
      assert.deepEqual(of('HTTP://10.0.0.7:80/v2'), [false, '10.0.0.7', 80, '/v2']);
      assert.deepEqual(of('[::1]:9000'), [false, '[::1]:9000', 9000, '']);
    });

    it('looks a name up as Kubernetes finds a Service: in the namespace, then as written', () => {
      const lookups = (s: string, namespace?: string) =>
        parseServiceAddress(s, { ...K8S, ...(namespace ? { namespace } : {}) })!.lookups;
      assert.deepEqual(lookups('quote'), ['quote']);
      assert.deepEqual(lookups('quote', 'shop'), ['quote.shop.svc.cluster.local', 'quote']);
      assert.deepEqual(lookups('quote.shop'), ['quote.shop.svc.cluster.local', 'quote.shop']);
      assert.deepEqual(lookups('https://quote.shop:8443'), ['quote.shop.svc.cluster.local', 'quote.shop']);
      assert.deepEqual(lookups('quote.shop.svc'), ['quote.shop.svc']);
      assert.deepEqual(lookups('api.example.com.'), ['api.example.com']);
      assert.deepEqual(lookups('10.0.0.7:8080'), []);
      assert.deepEqual(parseServiceAddress('quote.shop', { clusterDomain: 'k8s.internal' })!.lookups, [
        'quote.shop.svc.k8s.internal',
        'quote.shop',
      ]);
    });

    it('refuses what is no name or address', () => {
      for (const s of [
        'quote:0',
        'quote:65536',
        'quote/base',
        'ftp://quote',
        'http://user:pw@quote',
        'http://quote/?q',
        'http://',
        'quo_te',
        '-quote',
        'http://[::zz]',
      ]) {
        assert.equal(parseServiceAddress(s, K8S), undefined, s);
      }
    });
  });

  describe('served', () => {
    let quote: TestUpstream;
    let rig: TestGateway;
    let resolver: ReturnType<typeof testResolver>;

    before(async () => {
      quote = await testUpstream('127.0.0.1');
      // The names the Mappings below are looked up by, all of the one upstream.
      const names: Record<string, string[]> = {
        'quote.shop.svc.cluster.local': ['127.0.0.1'],
        'auth.shop.svc.cluster.local': ['127.0.0.1'],
        'example.test': ['127.0.0.1'],
        plain: ['127.0.0.1'],
      };
      resolver = testResolver(names);
      rig = await testGateway(
        [
          mapping('/k8s/', `quote.shop:${quote.port}`, { name: 'k8s' }),
          mapping('/outside/', `example.test:${quote.port}`, { name: 'outside' }),
          mapping('/bare/', `plain:${quote.port}`, { name: 'bare' }),
          mapping('/namespaced/', `quote:${quote.port}`, { name: 'namespaced', namespace: 'shop' }),
          mapping('/auth-service/', `auth:${quote.port}`, { name: 'auth-service', namespace: 'shop' }),
          mapping('/missing/', `nowhere.shop:${quote.port}`, { name: 'missing' }),
        ],
        { resolve: resolver },
      );
    });

    after(async () => {
      await rig.close();
      await quote.close();
    });

    it('reaches name.namespace as name.namespace.svc.<cluster domain>, sending the name as written as Host', async () => {
      const res = await send(rig.base, '/k8s/x');
      assert.equal(res.status, 200, res.text);
      assert.equal(quote.got.at(-1)!.headers.host, `quote.shop:${quote.port}`);
      assert.equal(quote.got.at(-1)!.url, '/x');
    });

    it('falls back to the name as written when it is no Kubernetes Service', async () => {
      assert.equal((await send(rig.base, '/outside/y')).status, 200);
      assert.equal(quote.got.at(-1)!.headers.host, `example.test:${quote.port}`);
      const tried = resolver.lookups.filter((name) => name.startsWith('example.test'));
      assert.deepEqual(tried.slice(0, 2), ['example.test.svc.cluster.local', 'example.test']);
      assert.equal((await send(rig.base, '/bare/z')).status, 200);
    });

    it("qualifies a bare name with the Mapping's namespace, a built-in module's name included", async () => {
      assert.equal((await send(rig.base, '/namespaced/a')).status, 200);
      assert.equal((await send(rig.base, '/auth-service/b')).status, 200);
      assert.equal(quote.got.at(-1)!.url, '/b');
    });

    it('answers 503 with the error body for a name that resolves nowhere', async () => {
      const res = await send(rig.base, '/missing/x');
      assert.equal(res.status, 503);
      assert.deepEqual(res.json(), {
        code: 503,
        message: '503: Service Unavailable',
        detail: 'the upstream service is unavailable: its name does not resolve',
      });
      assert.ok(rig.reported.errors.includes('missing refused'));
    });
  });

  describe('told apart from a module', () => {
    const modules = registry(echoModule('api'), echoModule('hotel-booking'));
    const problemsOf = (...records: unknown[]) => {
      try {
        createGateway({ config: configOf(...records), modules });
      } catch (err) {
        assert.ok(err instanceof ConfigError);
        return err.problems.map((p) => p.text);
      }
      return [];
    };

    it('routes a bare module name in process, and the same name with a port, scheme or namespace to a Kubernetes Service', async () => {
      const gateway = createGateway({
        config: configOf(
          mapping('/a/', 'api', { name: 'module' }),
          mapping('/b/', 'api:80', { name: 'service-port' }),
          mapping('/c/', 'http://api', { name: 'service-scheme' }),
          mapping('/d/', 'api', { name: 'service-ns', namespace: 'shop' }),
        ),
        modules,
      });
      const targets = gateway.snapshot().routes.map((r) => [r.name, r.target, r.cluster]);
      await gateway.close();
      assert.deepEqual(targets.sort(), [
        ['module', 'in-process', undefined],
        ['service-ns', 'remote', 'cluster_api_shop'],
        ['service-port', 'remote', 'cluster_api_80'],
        // One service with the same settings: one cluster, whichever way it is written.
        ['service-scheme', 'remote', 'cluster_api_80'],
      ]);
    });

    it("refuses a built-in module's name when that module does not run here, saying how to write the Service", () => {
      assert.deepEqual(problemsOf(mapping('/a/', 'auth', { name: 'login' })), [
        "Mapping login: service: module 'auth' is not running here (modules: api, hotel-booking); a Kubernetes Service of that name is written auth.<namespace>, auth:80 or http://auth",
      ]);
    });

    it("refuses a name one letter off a module's, which would otherwise go to DNS", () => {
      assert.deepEqual(problemsOf(mapping('/a/', 'hotel-bookings', { name: 'typo' })), [
        "Mapping typo: service: 'hotel-bookings' is no module: did you mean 'hotel-booking'? (modules: api, hotel-booking); a host of that name is written hotel-bookings.<namespace>, hotel-bookings:80 or http://hotel-bookings",
      ]);
      assert.deepEqual(problemsOf(mapping('/a/', 'quotes', { name: 'fine' })), []);
    });

    it('refuses the upstream fields on a Mapping of a module, naming the field', () => {
      assert.deepEqual(problemsOf(mapping('/a/', 'api', { name: 'm', retry_policy: { retry_on: '5xx' } })), [
        "Mapping m: retry_policy: applies to remote upstreams only: module 'api' is called in process",
      ]);
      assert.deepEqual(problemsOf(mapping('/a/', 'api', { name: 'm', endpoints: ['10.0.0.1'] })), [
        "Mapping m: endpoints: applies to remote upstreams only: module 'api' is called in process",
      ]);
      assert.deepEqual(problemsOf(mapping('/a/', 'api', { name: 'm', grpc: true })), [
        "Mapping m: grpc: applies to remote upstreams only: module 'api' is called in process and serves no gRPC",
      ]);
    });
  });
});
