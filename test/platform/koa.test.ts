/**
 * @module test/platform/koa
 * What src/platform/koa relies on in Koa, checked against the Koa installed.
 */
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import Koa from 'koa';
import {
  bodyExplicitlyNull,
  forgetExplicitStatus,
  handleRequestsWith,
  isKoaStream,
  KOA_VERSION,
  koaAccessor,
  queryCacheOf,
  setSelfWatchingBody,
} from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) => relies('koa', KOA_VERSION, what, holds, detail);

/** A context of `app` for a request to `url`, made without a connection. */
function contextFor(app: Koa, url: string): Koa.Context {
  const req = { url, method: 'GET', headers: {}, socket: {} } as unknown as IncomingMessage;
  const res = {
    statusCode: 404,
    getHeader: () => undefined,
    setHeader() {},
    removeHeader() {},
  } as unknown as ServerResponse;
  return app.createContext(req, res);
}

describe('platform/koa: what Gatehouse relies on in Koa', () => {
  it('is the Koa it was written against', () => pinnedAt('koa', KOA_VERSION));

  it("keeps each request's parsed query strings where Koa's own ctx.query looks for them", () => {
    const ctx = contextFor(new Koa(), '/x?a=1');
    const parsed = { a: 'from the cache' };
    queryCacheOf(ctx.request)['a=1'] = parsed;
    rely('reads ctx.query from its per-request cache (_querycache)', ctx.query === parsed);
  });

  it('lets a body set afterwards make the status 200 once the status is forgotten', () => {
    const app = new Koa();
    const ctx = contextFor(app, '/');
    ctx.status = 404;
    forgetExplicitStatus(ctx.response);
    ctx.body = 'found after all';
    rely(
      'sets 200 with a body once its status is not explicit (_explicitStatus)',
      ctx.status === 200,
      `status ${ctx.status}`,
    );
    const kept = contextFor(app, '/');
    kept.status = 404;
    kept.body = 'not found';
    rely('keeps an explicit status when a body is set', kept.status === 404);
  });

  it('tells a body set to null from one never set', () => {
    const ctx = contextFor(new Koa(), '/');
    rely('leaves a body never set unmarked', !bodyExplicitlyNull(ctx.response));
    ctx.body = null;
    rely('marks a body set to null (_explicitNullBody)', bodyExplicitlyNull(ctx.response));
  });

  it('reads a body set without its setter as its own, and leaves the status as it was', () => {
    const ctx = contextFor(new Koa(), '/');
    ctx.status = 202;
    const body = new PassThrough();
    setSelfWatchingBody(ctx.response, body);
    rely('reads ctx.body from its response (_body)', ctx.body === body && ctx.response.body === body);
    rely('keeps the status', ctx.status === 202, `status ${ctx.status}`);
  });

  it("takes for a stream what Koa's own test does", () => {
    const koas = require('koa/lib/is-stream.js') as (body: unknown) => boolean;
    const fakeStream = {
      readable: true,
      pipe() {},
      read() {},
      readableObjectMode: false,
      destroy() {},
      destroyed: false,
    };
    const bodies: [string, unknown][] = [
      ['a PassThrough', new PassThrough()],
      ['Readable.from', Readable.from([])],
      ['an object with the readable-stream surface', fakeStream],
      ['an object with pipe alone', { pipe() {} }],
      ['a string', 'text'],
      ['null', null],
      ['a Buffer', Buffer.from('x')],
      ['an empty object', {}],
    ];
    for (const [name, body] of bodies) {
      rely('tests a stream body as lib/is-stream.js did', isKoaStream(body) === koas(body), name);
    }
  });

  it('runs each request through the handling given in place of its own handleRequest', async () => {
    const app = new Koa();
    let handled = 0;
    handleRequestsWith(app, async (ctx, middleware) => {
      handled++;
      await middleware(ctx);
      ctx.res.end(String(ctx.body));
    });
    app.use((ctx) => {
      ctx.body = 'answered';
    });
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const body = await new Promise<string>((resolve, reject) => {
        http
          .get({ port: (server.address() as AddressInfo).port, host: '127.0.0.1' }, (res) => {
            let text = '';
            res.setEncoding('utf8').on('data', (c: string) => (text += c));
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
      rely('runs a request through app.handleRequest from its callback()', handled === 1 && body === 'answered');
    } finally {
      server.close();
    }
  });

  it('keeps the accessors a replacement falls back to on the prototypes of app.request and app.response', () => {
    const app = new Koa();
    for (const [target, name] of [
      [app.request, 'path'],
      [app.request, 'ip'],
      [app.request, 'query'],
      [app.response, 'type'],
    ] as const) {
      let accessor;
      try {
        accessor = koaAccessor(target, name);
      } catch (err) {
        rely(`has a ${name} accessor with a setter`, false, (err as Error).message);
      }
      rely(
        `has a ${name} getter and setter`,
        typeof accessor?.get === 'function' && typeof accessor.set === 'function',
      );
    }
  });
});
