/**
 * @module test/gateway/module-handler
 * A module that names the apps it mounts is entered at the mounted app for
 * the paths under it, and answers every path exactly as its whole app does.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import Koa from 'koa';
import mount from 'koa-mount';
import { createGateway, type GatehouseModule, type Gateway } from '../../src/gateway';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { echoModule, registry } from '../support/modules';
import { send } from '../support/client';

/** A module whose app counts what reaches it, then mounts an echo app at `/inner`. */
function mountingModule(name: string, named: boolean): { module: GatehouseModule; outerRuns: () => number } {
  const inner = echoModule(name).app;
  const app = new Koa();
  let outer = 0;
  app.use((_ctx, next) => {
    outer++;
    return next();
  });
  app.use(mount('/inner', inner));
  app.use((ctx) => {
    ctx.body = { outer: ctx.path };
  });
  return { module: { name, app, ...(named ? { mounts: { '/inner': inner } } : {}) }, outerRuns: () => outer };
}

describe('gateway: a module that mounts apps', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  const straight = mountingModule('straight', true);
  const mounted = mountingModule('mounting', false);

  before(async () => {
    gateway = createGateway({
      modules: registry(straight.module, mounted.module),
      config: configOf(mapping('/s/', 'straight', { name: 's' }), mapping('/m/', 'mounting', { name: 'm' })),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
  });

  /** What the client gets for `path` under each module, the module's name aside. */
  async function both(path: string): Promise<[string, string]> {
    const answers: string[] = [];
    for (const prefix of ['/s', '/m']) {
      const res = await send(base, `${prefix}${path}`);
      // The date is the moment of each answer, not the module's doing.
      const headers = { ...res.headers };
      delete headers.date;
      const answer = `${res.status} ${JSON.stringify(headers)} ${res.text}`;
      answers.push(
        answer
          .replace(/straight|mounting/g, 'NAME')
          .replace(/"mapping":"[sm]"/, '"mapping":"M"')
          .replaceAll(`${prefix}/`, '/PREFIX/'),
      );
    }
    return answers as [string, string];
  }

  it('runs the mounted app with the prefix stripped and the query kept, and its links carry the whole path', async () => {
    const res = await send(base, '/s/inner/a/b?q=1');
    assert.equal(res.status, 200);
    const seen = res.json() as { path: string; url: string; self: string };
    assert.equal(seen.path, '/a/b');
    assert.equal(seen.url, '/a/b?q=1');
    assert.equal(seen.self, `${base}/s/inner/a/b`);
  });

  it('answers every path as the whole app with koa-mount does', async () => {
    for (const path of ['/inner/a?x=%20', '/inner/', '/inner', '/innerX/a', '/other', '/', '/inner//a']) {
      const [s, m] = await both(path);
      assert.equal(s, m, path);
    }
  });

  it("enters the mounted app without the module's app, and takes every other path to it", async () => {
    const before = straight.outerRuns();
    await send(base, '/s/inner/a');
    assert.equal(straight.outerRuns(), before);
    await send(base, '/s/innerX');
    await send(base, '/s/inner');
    assert.equal(straight.outerRuns(), before + 2);
  });

  it('gives the app in front its path back once the mounted app has answered', async () => {
    const host = new Koa();
    host.use(async (ctx, next) => {
      await next();
      ctx.set('X-Path-After', ctx.path);
    });
    host.use(mount(gateway.app));
    const { server: hostServer, url } = await listen(host.callback());
    try {
      const res = await send(url, '/s/inner/a?q=1');
      assert.equal((res.json() as { path: string }).path, '/a');
      assert.equal(res.headers['x-path-after'], '/s/inner/a');
    } finally {
      await close(hostServer);
    }
  });

  it('refuses to build for a mount prefix without its leading slash or with a trailing one', () => {
    for (const prefix of ['inner', '/inner/']) {
      const inner = echoModule('bad').app;
      assert.throws(
        () =>
          createGateway({
            modules: registry({ name: 'bad', app: new Koa().use(mount('/inner', inner)), mounts: { [prefix]: inner } }),
            config: configOf(mapping('/b/', 'bad', { name: 'b' })),
          }),
        /mount prefix/,
      );
    }
  });
});
