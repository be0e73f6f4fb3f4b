import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import mount from 'koa-mount';
import Router from 'koa-router';
import request from 'supertest';
import { createGatehouse, type Gatehouse } from '../../src/gatehouse';
import { absoluteUrl, createServiceApp } from '../../src/http';
import { createLogger } from '../../src/telemetry';
import { close, listen } from '../support/server';

const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
/** Alice's confirmed hotel booking in config/bookings.yaml. */
const ALICE_BOOKING = 'b0db9db1-e959-46d6-b29b-0696485cc76a';

/** A host app with routes of its own and a Gatehouse mounted under `/gw`. */
function hostApp(gatehouse: Gatehouse): Koa {
  const host = new Koa();
  // A header of the host's, set before anything is routed, as security or request-id middleware do.
  host.use((ctx, next) => {
    ctx.set('X-Frame-Options', 'DENY');
    return next();
  });
  const router = new Router();
  router.get('/status', (ctx) => {
    ctx.body = { host: 'ok' };
  });
  host.use(router.routes());
  host.use(mount('/gw', gatehouse.app));
  return host;
}

describe('Gatehouse embedded in another Koa app', function () {
  describe('the demo config mounted under /gw', () => {
    let gatehouse: Gatehouse;
    let server: http.Server;
    let base: string;
    const client = () => request(server);

    before(async () => {
      gatehouse = await createGatehouse({
        configDir: 'config',
        grpcPort: false,
        watch: false,
        bookingStore: 'memory',
        logger: createLogger({ level: 'silent' }),
      });
      ({ server, url: base } = await listen(hostApp(gatehouse).callback()));
    });
    after(async () => {
      await close(server);
      await gatehouse?.stop();
    });

    it('answers /gw/v1/messages/1 with a url that keeps the mount prefix', async () => {
      const res = await client().get('/gw/v1/messages/1');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.url, `${base}/gw/v1/messages/1`);
    });

    it("answers alice's booking to alice, and 401 without credentials", async () => {
      const own = await client().get(`/gw/v1/hotels/bookings/${ALICE_BOOKING}`).set('Authorization', ALICE);
      assert.equal(own.status, 200, own.text);
      assert.equal(own.body.id, ALICE_BOOKING);
      assert.equal(own.body.status, 'confirmed');
      const anonymous = await client().get(`/gw/v1/hotels/bookings/${ALICE_BOOKING}`);
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers['www-authenticate'], /^Basic /);
      assert.equal(anonymous.body.code, 401);
    });

    it("leaves the host's own routes to the host", async () => {
      const res = await client().get('/status');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { host: 'ok' });
      assert.equal((await client().get('/v1/messages/1')).status, 404, 'the gateway answers only under /gw');
    });

    it('keeps /gw in the Location of a slash redirect, with the query', async () => {
      const res = await client().get('/gw/v1/messages?limit=2');
      assert.equal(res.status, 301);
      assert.match(res.headers.location, /^(http:\/\/127\.0\.0\.1:\d+)?\/gw\/v1\/messages\/\?limit=2$/);
    });

    it("keeps the host's own response headers on the gateway's answers, errors included", async () => {
      const answers = await Promise.all([
        client().get('/gw/v1/messages/1'),
        client().get('/gw/v1/messages/99'),
        client().get('/gw/v3/messages/1'),
        client().get(`/gw/v1/hotels/bookings/${ALICE_BOOKING}`),
        client().get('/gw/gateway/v0/check_alive').set('Accept', 'text/html'),
      ]);
      assert.deepEqual(
        answers.map((res) => [res.status, res.headers['x-frame-options']]),
        [
          [200, 'DENY'],
          [404, 'DENY'],
          [404, 'DENY'],
          [401, 'DENY'],
          [200, 'DENY'],
        ],
      );
      assert.equal(answers[3].body.code, 401, 'the error body is kept');
      assert.match(answers[3].headers['www-authenticate'], /^Basic /, "the gateway's own headers are kept");
    });

    it("answers the gateway's own paths under the prefix too", async () => {
      assert.equal((await client().get('/gw/gateway/v0/check_alive')).status, 200);
    });
  });

  describe('with a module of the embedding app', () => {
    let gatehouse: Gatehouse;
    let server: http.Server;
    let base: string;
    let dir: string;
    let weatherCalls = 0;
    const client = () => request(server);

    before(async () => {
      // The weather app answers with what it saw, so that the test sees what the gateway sent.
      const weather = createServiceApp();
      weather.use((ctx) => {
        weatherCalls++;
        ctx.body = {
          forecast: 'sunny',
          path: ctx.path,
          user: ctx.get('x-travel-user') || null,
          self: absoluteUrl(ctx, ctx.path),
        };
      });
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-embedding-'));
      cpSync('config', dir, { recursive: true });
      writeFileSync(
        join(dir, 'weather.yaml'),
        'apiVersion: gateway/v1\nkind: Mapping\nname: weather-mapping\nprefix: /weather/\nservice: weather\n',
      );
      gatehouse = await createGatehouse({
        configDir: dir,
        grpcPort: false,
        watch: false,
        bookingStore: 'memory',
        logger: createLogger({ level: 'silent' }),
        modules: [{ name: 'weather', app: weather }],
      });
      ({ server, url: base } = await listen(hostApp(gatehouse).callback()));
    });
    after(async () => {
      await close(server);
      await gatehouse?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('lists the module among the routable ones', () => {
      assert.equal(gatehouse.modules.get('weather')?.name, 'weather');
      const route = gatehouse.gateway.snapshot().routes.find((r) => r.name === 'weather-mapping');
      assert.equal(route?.target, 'in-process');
    });

    it('routes the Mapping that names it, behind the auth service, with the prefix replaced by /', async () => {
      const res = await client().get('/gw/weather/oslo').set('Authorization', ALICE);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { forecast: 'sunny', path: '/oslo', user: 'alice', self: `${base}/gw/weather/oslo` });
    });

    it('answers 401 for the module without credentials, before the module is asked', async () => {
      const calls = weatherCalls;
      const res = await client().get('/gw/weather/oslo');
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 401);
      assert.equal(weatherCalls, calls);
    });

    it('keeps routing the built-in modules beside it', async () => {
      assert.equal((await client().get('/gw/v2/messages/1')).status, 200);
    });
  });
});
