/**
 * @module test/http/request/query
 * `ctx.query` read in one pass over the query string, as Koa shapes it.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import request from 'supertest';
import { createServiceApp, linearQuery, parseQuery } from '../../../src/http';
import { startGatehouse } from '../../support/gatehouse';
import { DEMO_CONFIG } from '../../support/config-folder';

/** `ctx.query` of a request for `url` on `app`, without a server. */
function queryOf(app: Koa, url: string): unknown {
  const req = new IncomingMessage(new Socket());
  req.url = url;
  return app.createContext(req, new ServerResponse(req)).query;
}

/** Counts the calls of `URLSearchParams.getAll` while `run` runs: Koa's own read makes one per argument. */
async function getAllCalls(run: () => Promise<unknown>): Promise<number> {
  const getAll = URLSearchParams.prototype.getAll;
  let calls = 0;
  URLSearchParams.prototype.getAll = function (this: URLSearchParams, name: string) {
    calls++;
    return getAll.call(this, name);
  };
  try {
    await run();
  } finally {
    URLSearchParams.prototype.getAll = getAll;
  }
  return calls;
}

describe('http/request/query', () => {
  const samples = [
    '/x',
    '/x?a=1',
    '/x?a=1&b=2&a=3',
    '/x?a&a=&a=x',
    '/x?q=a+b%20c&%5F=%ZZ',
    '/x?__proto__=1&constructor=2&toString=3',
    '/x?k=%E2%82%AC&k=%FF',
    '/x?=v&&b',
  ];

  it('reads every query as Koa reads it: a string for an argument given once, an array for more, __proto__ as a name', () => {
    const koa = new Koa();
    const ours = linearQuery(new Koa());
    for (const url of samples) {
      const theirs = queryOf(koa, url) as Record<string, unknown>;
      const mine = queryOf(ours, url) as Record<string, unknown>;
      assert.deepEqual(mine, theirs, url);
      assert.deepEqual(Object.keys(mine), Object.keys(theirs), url);
    }
    assert.equal(Object.getPrototypeOf(parseQuery('__proto__=1')), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(parseQuery('__proto__=1'), '__proto__')?.value, '1');
  });

  it('reads it once a request, and sets it as Koa does', () => {
    const app = linearQuery(new Koa());
    const req = new IncomingMessage(new Socket());
    req.url = '/x?a=1';
    const ctx = app.createContext(req, new ServerResponse(req));
    assert.equal(ctx.query, ctx.query);
    ctx.query = { b: ['1', '2'] };
    assert.equal(ctx.querystring, 'b=1&b=2');
    assert.deepEqual({ ...ctx.query }, { b: ['1', '2'] });
  });

  it('reads 8,000 arguments of one name in one pass (Koa took a pass over all of them for each, a second in all)', async () => {
    const url = `/x?${Array(8000).fill('a').join('&')}`;
    const app = createServiceApp();
    app.use((ctx) => (ctx.body = { count: (ctx.query.a as string[]).length }));
    const calls = await getAllCalls(async () => {
      const res = await request(app.callback()).get(url).expect(200);
      assert.deepEqual(res.body, { count: 8000 });
    });
    assert.equal(calls, 0);
  });

  it('reads them in one pass through the whole gateway, with its access log naming the argument', async () => {
    const running = await startGatehouse({ configDir: DEMO_CONFIG });
    try {
      const calls = await getAllCalls(() =>
        request(running.url)
          .get(`/v1/messages/?${Array(8000).fill('a').join('&')}`)
          .expect(400),
      );
      assert.equal(calls, 0);
      const [line] = await running.log.waitForLines(1, (l) => l.msg === 'request');
      assert.deepEqual(line.query, ['a']);
    } finally {
      await running.stop();
    }
  });
});
