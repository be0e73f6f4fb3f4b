/**
 * @module test/http/lean-koa
 * A lean Koa app's accessors answer exactly as a plain Koa app's: the path
 * it writes, the client's address, the headers it sets, the Content-Type of
 * a type name, asked once or again.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import Koa, { type Context } from 'koa';
import mount from 'koa-mount';
import request from 'supertest';
import { leanKoa } from '../../src/http';

type Headers = Record<string, string>;
/** Every outgoing message has it (Node 15.13); @types/node declares it on ClientRequest alone. */
type WithRawNames = http.ServerResponse & { getRawHeaderNames(): string[] };

/** A context of `app` over a request for `url`, with a response that keeps what is set on it. */
function contextFor(app: Koa, url: string, headers: Headers = {}): Context {
  const req = Object.assign(new http.IncomingMessage(null as never), {
    url,
    method: 'GET',
    headers: { host: 'api.test', ...headers },
  });
  Object.defineProperty(req, 'socket', { value: { remoteAddress: '10.0.0.9' } });
  return app.createContext(req, new http.ServerResponse(req));
}

const URLS = ['/v1/messages/1', '/v1/messages/1?x=1', '/a#frag', '/a b?c', 'http://api.test/v1/x?y=1'];
const PATHS = ['/messages/1', '/', 'relative', '/with?question', '/with#hash'];

describe('http/lean-koa', () => {
  it("writes the URL Koa's ctx.path setter writes, for every request target", () => {
    for (const url of URLS) {
      for (const path of PATHS) {
        const lean = contextFor(leanKoa(new Koa()), url);
        const koa = contextFor(new Koa(), url);
        lean.path = path;
        koa.path = path;
        assert.equal(lean.req.url, koa.req.url, `${url} with path ${path}`);
      }
    }
  });

  it("reads the client's address as Koa does, with and without a trusted proxy, and keeps one set on the request", () => {
    for (const proxy of [false, true]) {
      for (const headers of [{}, { 'x-forwarded-for': '203.0.113.7, 198.51.100.2' }] as Headers[]) {
        const lean = contextFor(leanKoa(new Koa({ proxy, maxIpsCount: 1 })), '/', headers);
        const koa = contextFor(new Koa({ proxy, maxIpsCount: 1 }), '/', headers);
        assert.equal(lean.ip, koa.ip, `proxy ${proxy}, ${JSON.stringify(headers)}`);
      }
    }
    const lean = contextFor(leanKoa(new Koa()), '/');
    lean.request.ip = '192.0.2.1';
    assert.equal(lean.ip, '192.0.2.1');
  });

  it('sets the Content-Type Koa sets for a type name, the second time as the first', () => {
    const app = leanKoa(new Koa());
    for (const type of [
      'json',
      'json',
      'html',
      'text/plain',
      'application/json',
      'image/png',
      'no-such-type',
      'no-such-type',
      '',
    ]) {
      const lean = contextFor(app, '/');
      const koa = contextFor(new Koa(), '/');
      lean.set('Content-Type', 'text/x-before');
      koa.set('Content-Type', 'text/x-before');
      lean.type = type;
      koa.type = type;
      assert.equal(lean.response.get('Content-Type'), koa.response.get('Content-Type'), `type ${JSON.stringify(type)}`);
    }
  });

  it('sets headers as Koa does: one, a list, a single-valued one given as a list, an object of them', () => {
    const lean = contextFor(leanKoa(new Koa()), '/');
    const koa = contextFor(new Koa(), '/');
    for (const ctx of [lean, koa]) {
      ctx.set('X-One', 'a');
      ctx.response.set('Content-Length', 12 as unknown as string);
      ctx.set('Set-Cookie', ['a=1', 'b=2']);
      ctx.set('Content-Type', ['text/plain']);
      ctx.set({ 'X-Two': 'b', 'X-Three': '3' });
    }
    assert.deepEqual(lean.res.getHeaders(), koa.res.getHeaders());
    assert.deepEqual((lean.res as WithRawNames).getRawHeaderNames(), (koa.res as WithRawNames).getRawHeaderNames());
    assert.throws(() => lean.set('Content-Type', ['a', 'b']), /exactly one value/);
  });

  it('answers through a mounted app as a plain Koa app answers', async () => {
    const build = (app: Koa) => {
      const inner = new Koa();
      inner.use((ctx) => {
        ctx.body = { path: ctx.path, url: ctx.url, ip: ctx.ip.length > 0 };
      });
      app.use(mount('/v1', inner));
      app.use((ctx) => {
        ctx.body = { after: ctx.path, url: ctx.url };
      });
      return app.callback();
    };
    for (const path of ['/v1/messages/1?x=1', '/v1', '/v1/a%20b', '/other?y']) {
      const lean = await request(build(leanKoa(new Koa()))).get(path);
      const koa = await request(build(new Koa())).get(path);
      assert.equal(lean.status, koa.status);
      assert.deepEqual(lean.body, koa.body, path);
      assert.equal(lean.headers['content-type'], koa.headers['content-type']);
    }
  });
});
