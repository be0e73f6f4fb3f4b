/**
 * @module test/http/respond
 * A lean Koa app writes every kind of response exactly as a plain Koa app
 * does: each body Koa takes, the statuses without a body, HEAD, a body set
 * to null, an error thrown by the middleware or while writing.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Koa, { type Context } from 'koa';
import request from 'supertest';
import { leanKoa } from '../../src/http';

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** The headers worth comparing: Date and Connection say nothing of what Koa wrote. */
const COMPARED = ['content-type', 'content-length', 'transfer-encoding', 'x-case'];

async function answerOf(app: Koa, method: 'get' | 'head' = 'get'): Promise<Answer> {
  const res = await request(app.callback())
    [method]('/')
    .buffer(true)
    .parse((r, done) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (chunk: string) => (text += chunk));
      r.on('end', () => done(null, text));
    });
  const headers: Answer['headers'] = {};
  for (const name of COMPARED) headers[name] = res.headers[name];
  return { status: res.status, headers, body: (res.body as string) ?? '' };
}

/** The answer of a lean app and of a plain one, each running `handler`. */
async function both(
  handler: (ctx: Context) => void | Promise<void>,
  method: 'get' | 'head' = 'get',
): Promise<[Answer, Answer]> {
  const build = (app: Koa) => {
    app.silent = true;
    app.use(async (ctx) => {
      ctx.set('X-Case', 'set');
      await handler(ctx);
    });
    return app;
  };
  return [await answerOf(build(leanKoa(new Koa())), method), await answerOf(build(new Koa()), method)];
}

const CASES: Record<string, (ctx: Context) => void | Promise<void>> = {
  'a string': (ctx) => void (ctx.body = 'plain words'),
  'an HTML string': (ctx) => void (ctx.body = '<p>markup</p>'),
  'a buffer': (ctx) => void (ctx.body = Buffer.from('bytes')),
  'an object': (ctx) => void (ctx.body = { id: 1, name: 'one' }),
  'an array': (ctx) => void (ctx.body = [1, 2, 3]),
  'a Node stream': (ctx) => void (ctx.body = Readable.from(['str', 'eam'])),
  'a web stream': (ctx) => void (ctx.body = new Blob(['web ', 'stream']).stream()),
  'a Blob': (ctx) => void (ctx.body = new Blob(['a blob'])),
  'a Response': (ctx) => void (ctx.body = new Response('a response')),
  'a status and no body': (ctx) => void (ctx.status = 418),
  'a status with a message': (ctx) => {
    ctx.status = 422;
    ctx.message = 'Not This Way';
  },
  'a body set to null': (ctx) => void (ctx.body = null),
  'a 204 with a body': (ctx) => {
    ctx.body = 'dropped';
    ctx.status = 204;
  },
  'a 304 with a body': (ctx) => {
    ctx.body = { dropped: true };
    ctx.status = 304;
  },
  'nothing at all': () => undefined,
  'an error thrown': () => {
    throw Object.assign(new Error('no such thing'), { status: 404, expose: true });
  },
  'an unexpected error': () => {
    throw new Error('broken');
  },
  'a body that cannot be written': (ctx) => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    ctx.body = circular;
  },
  'a response written by the handler itself': (ctx) => {
    ctx.respond = false;
    ctx.res.writeHead(201, { 'Content-Type': 'text/plain' });
    ctx.res.end('own');
  },
};

describe('http/respond', () => {
  for (const [name, handler] of Object.entries(CASES)) {
    it(`answers ${name} as Koa does`, async () => {
      const [lean, koa] = await both(handler);
      assert.deepEqual(lean, koa);
    });
  }

  for (const name of ['a string', 'an object', 'a buffer', 'a Node stream', 'nothing at all']) {
    it(`answers HEAD for ${name} as Koa does`, async () => {
      const [lean, koa] = await both(CASES[name], 'head');
      assert.deepEqual(lean, koa);
    });
  }

  it('answers a stream that fails midway as Koa does: the response is cut short and the error reported', async () => {
    const errors: unknown[] = [];
    const failing = () =>
      new Readable({
        read() {
          this.push('partial ');
          this.destroy(new Error('the source broke'));
        },
      });
    const app = leanKoa(new Koa());
    app.on('error', (err: unknown) => errors.push(err));
    app.use((ctx) => void (ctx.body = failing()));
    await assert.rejects(request(app.callback()).get('/'));
    assert.equal((errors[0] as Error | undefined)?.message, 'the source broke');
  });

  it('reports no error for a client that leaves halfway through a streamed answer', async () => {
    const errors: unknown[] = [];
    let source: Readable | undefined;
    const app = leanKoa(new Koa());
    app.on('error', (err: unknown) => errors.push(err));
    app.use((ctx) => {
      // A first part, then nothing more until the client is gone.
      source = new Readable({ read() {} });
      source.push('first part');
      ctx.body = source;
    });
    const server = http.createServer(app.callback()).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const req = http.get({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        path: '/',
        agent: false,
      });
      const [res] = (await once(req, 'response')) as [http.IncomingMessage];
      await once(res, 'data');
      req.destroy();
      // Destroyed with the pipeline's error, which is not the app's to report.
      await new Promise((resolve) => source!.on('error', () => undefined).on('close', resolve));
      // The pipeline's callback runs once both ends are done.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(errors, []);
    } finally {
      server.close();
    }
  });
});
