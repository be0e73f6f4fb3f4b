import assert from 'node:assert/strict';
import type http from 'node:http';
import Koa from 'koa';
import mount from 'koa-mount';
import { createGateway, type Gateway } from '../../src/gateway';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { echoModule, registry, type Echo } from '../support/modules';
import { send } from '../support/client';

describe('gateway mounted in another Koa app', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  const pathsAfter: string[] = [];

  before(async () => {
    gateway = createGateway({
      modules: registry(echoModule('cars')),
      config: configOf(mapping('/v1/cars', 'cars', { rewrite: '' }), mapping('/strip/', 'cars')),
    });
    const host = new Koa();
    host.use(async (ctx, next) => {
      await next();
      pathsAfter.push(ctx.path);
    });
    host.use(mount('/host', gateway.app));
    host.use((ctx) => {
      ctx.body = 'host';
    });
    ({ server, url: base } = await listen(host.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
  });

  it('routes under the mount prefix and gives modules the full client path for absolute URLs', async () => {
    const res = await send(base, '/host/v1/%63ars/x?q=1');
    assert.equal(res.status, 200, res.text);
    const seen = res.json() as Echo;
    assert.equal(seen.path, '/v1/cars/x');
    assert.equal(seen.query, 'q=1');
    assert.equal(seen.originalPath, '/host/v1/cars/x');
    assert.equal(seen.self, `${base}/host/v1/cars/x`);
  });

  it('gives the right absolute URLs behind a prefix-stripping mapping too', async () => {
    const seen = (await send(base, '/host/strip/bookings/1')).json() as Echo;
    assert.equal(seen.path, '/bookings/1');
    assert.equal(seen.self, `${base}/host/strip/bookings/1`);
  });

  it('puts the host app path back after routing', async () => {
    pathsAfter.length = 0;
    await send(base, '/host/v1//cars');
    assert.deepEqual(pathsAfter, ['/host/v1//cars']);
  });

  it('answers its own errors with the error body and leaves other paths to the host', async () => {
    const missing = await send(base, '/host/nothing');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), { code: 404, message: '404: Not Found' });
    assert.equal((await send(base, '/host/../x')).status, 400);
    assert.equal((await send(base, '/host/gateway/v0/check_alive')).status, 200);
    const other = await send(base, '/elsewhere');
    assert.equal(other.text, 'host');
  });
});
