/**
 * Emissary's traffic fields, as a resource (v3alpha1) and in the annotation
 * (v2), through the gateway to real upstreams, against what Emissary's docs
 * say of each: a canary's weight (the Mappings without one share what is
 * left), retry_policy, circuit_breakers, load_balancer over the addresses a
 * Kubernetes name resolves to, prefix and regex redirects, and Host routing
 * by host and host_regex.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { createGateway, type Gateway } from '../../../../src/gateway';
import { close, listen } from '../../../support/server';
import { send } from '../../../support/client';
import { testResolver } from '../../../support/resolver';
import { testUpstream, type TestUpstream } from '../../../support/upstreams';
import { FORMS, loaded, written, type Fixture } from '../../../support/emissary';

/** A Mapping marking what it forwards with `X-Route: <name>`. */
function marked(name: string, spec: Record<string, unknown>, namespace?: string): Fixture {
  return {
    kind: 'Mapping',
    name,
    ...(namespace ? { namespace } : {}),
    spec: { ...spec, add_request_headers: { 'X-Route': name } },
  };
}

/** The Mappings of the tests: `one` is a single upstream's address, `kitchen` a Kubernetes name in namespace diner. */
function fixtures(one: string, port: number): Fixture[] {
  const kitchen = `kitchen:${port}`;
  return [
    marked('menu', { prefix: '/menu/', service: one }),
    marked('tasting', { prefix: '/menu/', service: one, weight: 10 }),
    marked('flaky', { prefix: '/flaky/', service: one, retry_policy: { retry_on: '5xx', num_retries: 2 } }),
    marked('picky', { prefix: '/picky/', service: one, retry_policy: { retry_on: 'gateway-error' } }),
    marked('busy', { prefix: '/busy/', service: one, circuit_breakers: [{ max_requests: 1 }] }),
    marked('pair', { prefix: '/pair/', service: kitchen, load_balancer: { policy: 'round_robin' } }, 'diner'),
    marked(
      'sticky',
      { prefix: '/sticky/', service: kitchen, load_balancer: { policy: 'ring_hash', header: 'X-Guest' } },
      'diner',
    ),
    {
      kind: 'Mapping',
      name: 'old-menu',
      spec: { prefix: '/old-menu/', service: 'menu.example', host_redirect: true, prefix_redirect: '/menu/' },
    },
    {
      kind: 'Mapping',
      name: 'receipts',
      spec: {
        prefix: '/orders/',
        service: 'menu.example',
        host_redirect: true,
        regex_redirect: { pattern: '/orders/([0-9]+)/view', substitution: '/receipts/\\1' },
        redirect_response_code: 308,
      },
    },
    marked('desk-any', { prefix: '/desk/', service: one }),
    marked('desk-front', { prefix: '/desk/', service: one, host: 'front.hotel.example' }),
    marked('desk-wing', { prefix: '/desk/', service: one, host: '^wing[2-9]\\.hotel\\.example$', host_regex: true }),
  ];
}

for (const form of FORMS) {
  describe(`Emissary traffic fields, written as ${form === 'resource' ? 'v3alpha1 resources' : 'v2 records of the annotation'}`, () => {
    let a: TestUpstream;
    let b: TestUpstream;
    let gateway: Gateway;
    let server: http.Server;
    let base: string;
    const draws: number[] = [];

    /** The Mapping that forwarded the last request `up` got. */
    const lastRoute = (up: TestUpstream) => up.got.at(-1)?.headers['x-route'];

    before(async () => {
      a = await testUpstream('127.0.0.1');
      b = await testUpstream('127.0.0.2', {}, a.port);
      const resolve = testResolver({ 'kitchen.diner.svc.cluster.local': ['127.0.0.1', '127.0.0.2'] });
      const config = loaded(written(form, ...fixtures(a.address, a.port))).config;
      gateway = createGateway({ config, upstreams: { resolve }, random: () => draws.shift() ?? 0.5 });
      ({ server, url: base } = await listen(gateway.app.callback()));
    });

    afterEach(() => {
      for (const up of [a, b]) {
        up.release();
        up.replies = [];
        up.fallback = 200;
      }
    });

    after(async () => {
      await close(server);
      await gateway?.close();
      await Promise.all([a?.close(), b?.close()]);
    });

    it('sends a canary its weight of the requests, the Mapping without a weight the rest', async () => {
      draws.push(...Array.from({ length: 100 }, (_, i) => (i + 0.5) / 100));
      const routes: Record<string, number> = {};
      for (let i = 0; i < 100; i++) {
        assert.equal((await send(base, '/menu/soup')).status, 200);
        const route = String(lastRoute(a));
        routes[route] = (routes[route] ?? 0) + 1;
      }
      assert.deepEqual(routes, { menu: 90, tasting: 10 });
    });

    it('tries a 5xx again under retry_policy, up to num_retries, and a 500 not at all under gateway-error', async () => {
      const before = a.got.length;
      a.replies = [503, 503];
      assert.equal((await send(base, '/flaky/x')).status, 200);
      assert.equal(a.got.length - before, 3);
      a.replies = [500];
      assert.equal((await send(base, '/picky/x')).status, 500);
      assert.equal(a.got.length - before, 4);
    });

    it('answers 503 with x-envoy-overloaded past circuit_breakers max_requests, without asking the upstream', async () => {
      a.replies = ['hold'];
      const first = send(base, '/busy/slow');
      await a.holding(1);
      const asked = a.got.length;
      const second = await send(base, '/busy/fast');
      assert.deepEqual(
        [second.status, second.headers['x-envoy-overloaded'], second.json().code, a.got.length],
        [503, 'true', 503, asked],
      );
      a.release();
      assert.equal((await first).status, 200);
    });

    it('balances over the addresses a Kubernetes name resolves to: in turn (round_robin), or by a header (ring_hash)', async () => {
      const servedBy = async (path: string, headers: Record<string, string> = {}) =>
        String((await send(base, path, { headers })).headers['x-served-by']).split(':')[0];
      const turns = [];
      for (let i = 0; i < 4; i++) turns.push(await servedBy('/pair/x'));
      assert.deepEqual(new Set(turns), new Set(['127.0.0.1', '127.0.0.2']));
      assert.notEqual(turns[0], turns[1]);
      assert.deepEqual([turns[0], turns[1]], [turns[2], turns[3]]);
      const guest = [];
      for (let i = 0; i < 4; i++) guest.push(await servedBy('/sticky/x', { 'X-Guest': 'room-12' }));
      assert.equal(new Set(guest).size, 1);
    });

    it('redirects with prefix_redirect and regex_redirect to the service as host, the code redirect_response_code says', async () => {
      const moved = await send(base, '/old-menu/soup?size=large');
      assert.deepEqual([moved.status, moved.headers.location], [301, 'http://menu.example/menu/soup?size=large']);
      const receipt = await send(base, '/orders/42/view');
      assert.deepEqual([receipt.status, receipt.headers.location], [308, 'http://menu.example/receipts/42']);
    });

    it('routes by the Host a Mapping names exactly (host) or by pattern (host_regex), else to the Mapping without one', async () => {
      const routeFor = async (host: string) => {
        assert.equal((await send(base, '/desk/key', { headers: { Host: host } })).status, 200, host);
        return lastRoute(a);
      };
      assert.deepEqual(
        [
          await routeFor('front.hotel.example'),
          await routeFor('wing3.hotel.example'),
          await routeFor('wing1.hotel.example'),
          await routeFor('hotel.example'),
        ],
        ['desk-front', 'desk-wing', 'desk-any', 'desk-any'],
      );
    });
  });
}
