import assert from 'node:assert/strict';
import type http from 'node:http';
import { ConfigError, createGateway, type GatehouseModule, type Gateway } from '../../src/gateway';
import { createServiceApp } from '../../src/http';
import { createAuthStage } from '../../src/gateway/stages/auth-stage';
import { createRateLimitStage } from '../../src/gateway/stages/ratelimit-stage';
import { buildRuntimeSteps } from '../../src/gateway/runtime';
import { disposeRuntime } from '../../src/gateway/runtime-disposal';
import { runInSlices } from '../../src/gateway/slices';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { echoModule, registry, type Echo } from '../support/modules';
import { send } from '../support/client';

/** A module whose answers wait until the test releases them. */
function gatedModule(name: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const arrived = new Promise<void>((resolve) => (entered = resolve));
  const app = createServiceApp();
  app.use(async (ctx) => {
    entered();
    await released;
    ctx.body = { module: name };
  });
  const module: GatehouseModule = { name, app };
  return { module, release, arrived };
}

describe('gateway reconfiguration', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  const gated = gatedModule('slow');

  before(async () => {
    gateway = createGateway({
      modules: registry(echoModule('hotels'), echoModule('cars'), gated.module),
      config: configOf(mapping('/v1/', 'hotels', { name: 'first' }), mapping('/slow', 'slow', { name: 'slow' })),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    gated.release();
    await close(server);
    await gateway.close();
  });

  it('swaps the whole configuration at once', async () => {
    assert.equal(((await send(base, '/v1/x')).json() as Echo).module, 'hotels');
    gateway.reconfigure(
      configOf(mapping('/v1/', 'cars', { name: 'second' }), mapping('/slow', 'slow', { name: 'slow' })),
    );
    assert.equal(((await send(base, '/v1/x')).json() as Echo).module, 'cars');
    assert.deepEqual(
      gateway.snapshot().routes.map((r) => r.name),
      ['slow', 'second'],
    );
  });

  it('keeps serving the old configuration when the new one cannot be served, and says why', async () => {
    const before = gateway.snapshot();
    let thrown: unknown;
    try {
      gateway.reconfigure(
        configOf(
          mapping('/v1/', 'hotel-booking', { name: 'typo' }),
          mapping('/other/', 'hotels:0', { name: 'foo' }),
          mapping('/v1/cars', 'cars'),
        ),
      );
    } catch (err) {
      thrown = err;
    }
    assert.ok(thrown instanceof ConfigError);
    assert.deepEqual(
      thrown.problems.map((p) => p.text),
      [
        "Mapping typo: service: module 'hotel-booking' is not running here (modules: cars, hotels, slow); a Kubernetes Service of that name is written hotel-booking.<namespace>, hotel-booking:80 or http://hotel-booking",
        "Mapping foo: service: service 'hotels:0' is neither a registered module (cars, hotels, slow) nor an address (name, name.namespace, host:port, http://host[:port][/base] or https://...)",
      ],
    );
    assert.equal(((await send(base, '/v1/x')).json() as Echo).module, 'cars');
    const after = gateway.snapshot();
    assert.deepEqual(after.routes, before.routes);
    assert.deepEqual(
      after.rejected?.problems.map((p) => p.record),
      ['typo', 'foo'],
    );
  });

  it('lets a request under way finish with the configuration it started with', async () => {
    const pending = send(base, '/slow');
    await gated.arrived;
    gateway.reconfigure(configOf(mapping('/v1/', 'hotels')));
    assert.equal((await send(base, '/slow')).status, 404);
    gated.release();
    const res = await pending;
    assert.equal(res.status, 200);
    assert.deepEqual(res.json(), { module: 'slow' });
    assert.equal(gateway.snapshot().rejected, undefined, 'a good reconfiguration clears the last refusal');
  });
});

describe('gateway build errors', () => {
  it('refuses a module without an HTTP app, and a prefix that is no usable path', () => {
    assert.throws(
      () =>
        createGateway({
          modules: registry({ name: 'ratelimit' }),
          config: configOf(
            mapping('/rl/', 'ratelimit', { name: 'rl' }),
            mapping('/x%2Fy/', 'http://127.0.0.1:1', { name: 'bad' }),
          ),
        }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 2 &&
        err.problems[0].text === "Mapping rl: service: module 'ratelimit' has no HTTP app to route to" &&
        err.problems[1].text.startsWith("Mapping bad: prefix: '/x%2Fy/' is not a usable path: an encoded slash"),
    );
  });

  it('refuses a prefix with ;parameters, which many backends drop from the path', () => {
    for (const prefix of ['/api;v=2/', '/api%3Bv=2/']) {
      assert.throws(
        () => createGateway({ config: configOf(mapping(prefix, 'http://127.0.0.1:1', { name: 'semi' })) }),
        (err: unknown) =>
          err instanceof ConfigError &&
          err.problems.length === 1 &&
          err.problems[0].text ===
            `Mapping semi: prefix: '${prefix}' holds ;parameters, which Tomcat, Spring and JAX-RS backends drop: a request would be routed by what its backend does not see`,
      );
    }
  });

  it('accepts addresses as services: host:port, http and https URLs', async () => {
    const gateway = createGateway({
      config: configOf(
        mapping('/a/', '127.0.0.1:9'),
        mapping('/b/', 'http://localhost:9/base/'),
        mapping('/c/', 'https://example.org'),
        mapping('/d/', '[::1]:9'),
      ),
    });
    assert.deepEqual(
      gateway.snapshot().routes.map((r) => [r.prefix, r.target]),
      [
        ['/a/', 'remote'],
        ['/b/', 'remote'],
        ['/c/', 'remote'],
        ['/d/', 'remote'],
      ],
    );
    await gateway.close();
  });

  it('refuses what only looks like an address', () => {
    for (const service of [
      'host_1',
      'host:0',
      'host:65536',
      'ftp://host:21',
      'http://user:pw@host:1',
      'http://host:1/?q',
      'http://',
    ]) {
      assert.throws(
        () => createGateway({ config: configOf(mapping('/a/', service)) }),
        (err: unknown) =>
          err instanceof ConfigError &&
          /is neither a registered module \(none registered\) nor an address/.test(err.message),
        service,
      );
    }
  });
});

describe('a configuration prepared before it is served', () => {
  const many = (service: string, count: number) =>
    Array.from({ length: count }, (_, i) => mapping(`/p${i}/`, service, { name: `${service}-${i}` }));

  it('is built a slice at a time, the event loop turning between slices, and serves once handed to reconfigure', async () => {
    const gateway = createGateway({
      modules: registry(echoModule('hotels'), echoModule('cars')),
      config: configOf(...many('hotels', 1)),
    });
    const { server, url } = await listen(gateway.app.callback());
    try {
      const next = configOf(...many('cars', 3000));
      let turns = 0;
      let counting = true;
      const count = () => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const prepared = await gateway.prepare(next);
      counting = false;
      assert.ok(turns > 1, `the event loop turned ${turns} times while 3000 routes were built`);
      assert.equal(
        ((await send(url, '/p0/x')).json() as Echo).module,
        'hotels',
        'a prepared configuration does not serve yet',
      );
      gateway.reconfigure(prepared);
      assert.equal(((await send(url, '/p2999/x')).json() as Echo).module, 'cars');
      assert.equal(gateway.snapshot().routes.length, 3000);
      assert.throws(
        () => gateway.reconfigure(prepared),
        /not prepared by this gateway, or was served or discarded already/,
      );
    } finally {
      await close(server);
      await gateway.close();
    }
  });

  it('is refused with every problem, shown in the snapshot, and the old configuration serves on', async () => {
    const gateway = createGateway({
      modules: registry(echoModule('hotels')),
      config: configOf(mapping('/v1/', 'hotels')),
    });
    await assert.rejects(gateway.prepare(configOf(mapping('/v2/', 'nowhere:0', { name: 'lost' }))), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.problems[0].text, /^Mapping lost: service: service 'nowhere:0' is neither a registered module/);
      return true;
    });
    assert.match(gateway.snapshot().rejected!.problems[0].text, /Mapping lost/);
    assert.deepEqual(
      gateway.snapshot().routes.map((r) => r.prefix),
      ['/v1/'],
    );
    await gateway.close();
  });

  it('closes what it opened once discarded, and can then not be served', async () => {
    const gateway = createGateway({ config: configOf(mapping('/v1/', 'http://127.0.0.1:9')) });
    const prepared = await gateway.prepare(configOf(mapping('/v2/', 'http://127.0.0.1:10')));
    await prepared.discard();
    await prepared.discard();
    assert.throws(() => gateway.reconfigure(prepared), /served or discarded already/);
    assert.deepEqual(
      gateway.snapshot().routes.map((r) => r.prefix),
      ['/v1/'],
    );
    await gateway.close();
  });

  it('makes the clusters of its remote Mappings in config order, and closes their pools once discarded', async () => {
    const stages = { auth: createAuthStage, rateLimit: createRateLimitStage };
    const config = configOf(
      mapping('/z/', 'http://127.0.0.1:9'),
      mapping('/a/', 'http://127.0.0.1:10'),
      mapping('/zz/', 'http://127.0.0.1:9', { name: 'again' }),
    );
    const runtime = await runInSlices(buildRuntimeSteps(config, new Map(), stages));
    assert.deepEqual(
      runtime.clusters.all().map((c) => c.name),
      ['cluster_127_0_0_1_9', 'cluster_127_0_0_1_10'],
    );
    const pools = runtime.clusters.all().flatMap((c) => c.endpoints.map((e) => e.pool));
    assert.equal(pools.length, 2);
    assert.ok(pools.every((p) => !p.closed));
    await disposeRuntime(runtime);
    assert.ok(pools.every((p) => p.closed));
  });

  it('retires the configuration it replaces even when a stage of that one throws as it closes', async () => {
    const closed: string[] = [];
    const gateway = createGateway({
      config: configOf(mapping('/v1/', 'http://127.0.0.1:9'), {
        apiVersion: 'gateway/v1',
        kind: 'AuthService',
        name: 'a',
        auth_service: '127.0.0.1:9',
      }),
      stages: {
        auth: () => ({
          run: () => true,
          close() {
            closed.push('auth');
            throw new Error('the stage would not close');
          },
        }),
      },
    });
    gateway.reconfigure(await gateway.prepare(configOf(mapping('/v2/', 'http://127.0.0.1:9'))));
    // The throw came in a promise of its own, and went nowhere: the gateway is still whole.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(closed, ['auth']);
    assert.deepEqual(
      gateway.snapshot().routes.map((r) => r.prefix),
      ['/v2/'],
    );
    await gateway.close();
  });
});

describe('gateway snapshot', () => {
  it('lists the routes in match order with what the diagnostic page shows, read-only', async () => {
    const labels = {
      gateway: [
        {
          request_label_group: [
            { 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } },
          ],
        },
      ],
    };
    const gateway = createGateway({
      modules: registry(echoModule('api'), echoModule('hotels')),
      config: configOf(
        mapping('/v1/', 'api', { name: 'api', rewrite: '' }),
        // timeout_ms left to the loader's default, which the snapshot shows.
        mapping('/v1//hotels', 'hotels', {
          name: 'hotels',
          rewrite: '',
          labels,
          bypass_auth: true,
          timeout_ms: undefined,
        }),
        mapping('/remote/', 'http://127.0.0.1:9', { name: 'remote', timeout_ms: 50, method: 'GET', precedence: 1 }),
      ),
    });
    const snap = gateway.snapshot();
    assert.equal(snap.ready, true);
    assert.deepEqual(snap.routes[0], {
      name: 'remote',
      prefix: '/remote/',
      rewrite: '/',
      service: 'http://127.0.0.1:9',
      target: 'remote',
      precedence: 1,
      method: 'GET',
      bypass_auth: false,
      timeout_ms: 50,
      cluster: 'cluster_127_0_0_1_9',
    });
    assert.deepEqual(snap.routes[1], {
      name: 'hotels',
      prefix: '/v1/hotels',
      rewrite: '',
      service: 'hotels',
      target: 'in-process',
      precedence: 0,
      bypass_auth: true,
      timeout_ms: 3000,
      labels,
    });
    assert.equal(snap.routes[2].name, 'api');
    assert.ok(Object.isFrozen(snap.routes[1].labels.gateway[0]));
    assert.throws(() => (snap.routes as unknown[]).push({}));
    await gateway.close();
  });
});
