/**
 * @module test/http/mount
 * Switching the request path: `setPath` writes the URL Koa's own setter
 * writes, and `mount` runs an app under a prefix as koa-mount does.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Context } from 'koa';
import koaMount from 'koa-mount';
import request from 'supertest';
import { absoluteUrl, basePath, createServiceApp, mount, setPath } from '../../src/http';

/** A context over a request for `url`, as Koa builds one. */
function contextFor(url: string): Context {
  const req = { url, method: 'GET', headers: { host: 'api.test' }, socket: {} } as unknown as IncomingMessage;
  const res = { getHeader: () => undefined, setHeader: () => undefined, removeHeader: () => undefined } as unknown as ServerResponse;
  return new Koa().createContext(req, res) as Context;
}

const URLS = ['/v1/messages/1', '/v1/messages/1?x=1&y=%20', '/v1/', '/', '/a?', '/a#frag', '/a b?c', '//host.test/x?y', '/a?b#c', '/caf%C3%A9?q=é'];
const PATHS = ['/messages/1', '/', '/v1/messages/1', 'relative', '/with?question', '/with#hash', '/sp ace', '/é'];

describe('http/mount', () => {
  describe('setPath', () => {
    for (const url of URLS) {
      it(`writes the URL Koa's ctx.path setter writes, from ${url}`, () => {
        for (const path of PATHS) {
          const ours = contextFor(url);
          const koas = contextFor(url);
          setPath(ours, path);
          koas.path = path;
          assert.equal(ours.req.url, koas.req.url, `${url} with path ${path}`);
          assert.equal(ours.path, koas.path);
          assert.equal(ours.querystring, koas.querystring);
        }
      });
    }

    it('leaves the URL alone when the path is already the one asked for', () => {
      const ctx = contextFor('/a?x=1');
      const before = ctx.req.url;
      setPath(ctx, '/a');
      assert.equal(ctx.req.url, before);
    });
  });

  describe('mount', () => {
    /** An app that answers what it sees of the path, its prefix and the links it would write. */
    function probe(): Koa {
      const app = createServiceApp();
      app.use((ctx, next) => {
        if (ctx.path === '/pass') return next();
        ctx.body = {
          path: ctx.path,
          url: ctx.url,
          query: ctx.querystring,
          mountPath: (ctx as Context & { mountPath?: string }).mountPath,
          base: basePath(ctx),
          self: absoluteUrl(ctx, '/things/1'),
        };
      });
      return app;
    }

    /** `probe` under `prefix`, in a host app that answers what it sees after the mounted app passed on. */
    function hosted(prefix: string, ours: boolean): Koa {
      const host = new Koa();
      host.use(ours ? mount(prefix, probe()) : koaMount(prefix, probe()));
      host.use((ctx) => {
        ctx.body = { after: ctx.path, url: ctx.url };
      });
      return host;
    }

    const cases: [string, string][] = [
      ['/v1', '/v1/messages/1?x=1'],
      ['/v1', '/v1'],
      ['/v1', '/v1/'],
      ['/v1', '/v1?x=1'],
      ['/v1', '/v1x/messages'],
      ['/v1', '/v2/messages'],
      ['/v1', '/v1/pass?q=1'],
      ['/v1/', '/v1/messages'],
      ['/v1/', '/v1/'],
      ['/v1/', '/v1'],
      ['/', '/v1/messages?x=1'],
      ['/v1', '/v1/caf%C3%A9'],
    ];
    for (const [prefix, path] of cases) {
      it(`answers ${path} under ${prefix} as koa-mount does`, async () => {
        const ours = await request(hosted(prefix, true).callback()).get(path).set('Host', 'api.test');
        const theirs = await request(hosted(prefix, false).callback()).get(path).set('Host', 'api.test');
        assert.equal(ours.status, theirs.status);
        assert.deepEqual(ours.body, theirs.body);
      });
    }

    it('strips the prefix inside the app and puts the path back for what follows', async () => {
      const res = await request(hosted('/v1', true).callback()).get('/v1/messages/1?x=1').set('Host', 'api.test').expect(200);
      assert.deepEqual(res.body, {
        path: '/messages/1',
        url: '/messages/1?x=1',
        query: 'x=1',
        mountPath: '/v1',
        base: '/v1',
        self: 'http://api.test/v1/things/1',
      });
      const passed = await request(hosted('/v1', true).callback()).get('/v1/pass?q=1').expect(200);
      assert.deepEqual(passed.body, { after: '/v1/pass', url: '/v1/pass?q=1' });
    });

    it('keeps every prefix in links when mounts are nested', async () => {
      const inner = new Koa();
      inner.use(mount('/v1', probe()));
      const host = new Koa();
      host.use(mount('/host', inner));
      const res = await request(host.callback()).get('/host/v1/messages/1').set('Host', 'api.test').expect(200);
      assert.equal(res.body.path, '/messages/1');
      assert.equal(res.body.self, 'http://api.test/host/v1/things/1');
    });

    it('refuses a prefix that is no path', () => {
      assert.throws(() => mount('v1', probe()), /must begin with '\/'/);
    });
  });
});
