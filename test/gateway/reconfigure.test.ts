import assert from 'node:assert/strict';
import type http from 'node:http';
import { ConfigError, createGateway, type GatehouseModule, type Gateway } from '../../src/gateway';
import { createServiceApp } from '../../src/http';
import { close, configOf, echoModule, listen, mapping, registry, send, type Echo } from './helpers';

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
    gateway.reconfigure(configOf(mapping('/v1/', 'cars', { name: 'second' }), mapping('/slow', 'slow', { name: 'slow' })));
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
        configOf(mapping('/v1/', 'hotel-booking', { name: 'typo' }), mapping('/other/', 'hotels:0', { name: 'foo' }), mapping('/v1/cars', 'cars')),
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
          config: configOf(mapping('/rl/', 'ratelimit', { name: 'rl' }), mapping('/x%2Fy/', 'http://127.0.0.1:1', { name: 'bad' })),
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
    for (const service of ['host_1', 'host:0', 'host:65536', 'ftp://host:21', 'http://user:pw@host:1', 'http://host:1/?q', 'http://']) {
      assert.throws(
        () => createGateway({ config: configOf(mapping('/a/', service)) }),
        (err: unknown) => err instanceof ConfigError && /is neither a registered module \(none registered\) nor an address/.test(err.message),
        service,
      );
    }
  });
});

describe('gateway snapshot', () => {
  it('lists the routes in match order with what the diagnostic page shows, read-only', async () => {
    const labels = { gateway: [{ request_label_group: [{ 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } }] }] };
    const gateway = createGateway({
      modules: registry(echoModule('api'), echoModule('hotels')),
      config: configOf(
        mapping('/v1/', 'api', { name: 'api', rewrite: '' }),
        mapping('/v1//hotels', 'hotels', { name: 'hotels', rewrite: '', labels, bypass_auth: true }),
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
    assert.ok(Object.isFrozen(snap.routes[1].labels!.gateway[0]));
    assert.throws(() => (snap.routes as unknown[]).push({}));
    await gateway.close();
  });
});
