/**
 * @module test/http/request/request-path
 * Switching the request path: `setPath` writes the URL Koa's own setter writes.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Context } from 'koa';
import { setPath } from '../../../src/http';

/** A context over a request for `url`, as Koa builds one. */
function contextFor(url: string): Context {
  const req = { url, method: 'GET', headers: { host: 'api.test' }, socket: {} } as unknown as IncomingMessage;
  const res = {
    getHeader: () => undefined,
    setHeader: () => undefined,
    removeHeader: () => undefined,
  } as unknown as ServerResponse;
  return new Koa().createContext(req, res);
}

const URLS = [
  '/v1/messages/1',
  '/v1/messages/1?x=1&y=%20',
  '/v1/',
  '/',
  '/a?',
  '/a#frag',
  '/a b?c',
  '//host.test/x?y',
  '/a?b#c',
  '/caf%C3%A9?q=é',
];
const PATHS = ['/messages/1', '/', '/v1/messages/1', 'relative', '/with?question', '/with#hash', '/sp ace', '/é'];

describe('http/request/request-path', () => {
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
});
