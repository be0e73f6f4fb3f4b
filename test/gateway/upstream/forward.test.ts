import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import Koa from 'koa';
import mount from 'koa-mount';
import { createGateway, type Gateway } from '../../../src/gateway';
import { close, listen } from '../../support/server';
import { configOf, mapping } from '../../support/records';
import { freePort } from '../../support/ports';
import { partialAnswer, partialAnswerAfterHead, send } from '../../support/client';
import { recordingUpstream, type Received } from '../../support/upstreams';

/**
 * The timeout_ms of the Mappings to an upstream that stalls after part of its answer, tried in turn:
 * the bound counts from the request, and the answer's head must come before it for the case to be tested.
 */
const STALL_TIMEOUTS_MS = [150, 600, 2400, 9600];

describe('gateway remote routing', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  let upstream: Awaited<ReturnType<typeof recordingUpstream>>;
  let slow: Awaited<ReturnType<typeof listen>>;
  let broken: Awaited<ReturnType<typeof listen>>;
  let partial: Awaited<ReturnType<typeof listen>>;
  let dead: number;

  before(async () => {
    upstream = await recordingUpstream((req, res, received) => {
      if (req.url!.startsWith('/base/status/')) {
        const status = Number(req.url!.split('/')[3]);
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(status === 204 || req.method === 'HEAD' ? undefined : JSON.stringify({ upstream: status }));
        return;
      }
      if (req.url!.startsWith('/base/untyped')) {
        res.end('plain bytes');
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Upstream', 'yes');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('Connection', 'x-resp-named');
      res.setHeader('X-Resp-Named', 'dropped');
      res.setHeader('Keep-Alive', 'timeout=5');
      res.setHeader('Proxy-Authenticate', 'Basic');
      res.setHeader('Upgrade', 'foo');
      res.end(JSON.stringify({ length: received.body.length }));
    });
    slow = await listen(() => undefined);
    broken = await listen((req) => req.socket.destroy());
    // Sends its headers and part of a sized body, then stalls or hangs up.
    partial = await listen((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' });
      // Hung up once the half is out: on a timer, a stalled machine could let timeout_ms fire first.
      res.write('{"half":', () => {
        if (req.url!.endsWith('/cut')) req.socket.destroy();
      });
    });
    dead = await freePort();
    gateway = createGateway({
      config: configOf(
        mapping('/remote/', `${upstream.url}/base/`, {
          name: 'remote',
          add_request_headers: { 'X-Added': 'by-gateway' },
          remove_request_headers: ['x-secret'],
          add_response_headers: { 'X-Served-By': 'gatehouse' },
        }),
        mapping('/plain', `127.0.0.1:${upstream.port}`, { name: 'plain', rewrite: '' }),
        mapping('/slow/', slow.url, { timeout_ms: 100 }),
        mapping('/dead/', `127.0.0.1:${dead}`),
        mapping('/broken/', broken.url),
        ...STALL_TIMEOUTS_MS.map((ms) => mapping(`/stall-${ms}/`, partial.url, { timeout_ms: ms })),
        // Hung up on by the upstream, not timed out: no timeout_ms to race on a loaded machine.
        mapping('/cut-short/', partial.url, { rewrite: '/partial/' }),
        mapping('/unforwarded/', upstream.url, { remove_request_headers: 'Forwarded' }),
      ),
    });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await Promise.all([close(upstream.server), close(slow.server), close(broken.server), close(partial.server)]);
  });

  function last(): Received {
    return upstream.received[upstream.received.length - 1];
  }

  it('forwards method, rewritten path under the base, query and headers', async () => {
    const res = await send(base, '/remote/x/%79?q=1&b=%20', {
      method: 'DELETE',
      headers: { 'X-Secret': 'hidden', 'X-Kept': 'kept', Host: 'gate.example:8443' },
    });
    assert.equal(res.status, 200, res.text);
    const got = last();
    assert.equal(got.method, 'DELETE');
    assert.equal(got.url, '/base/x/y?q=1&b=%20');
    assert.equal(got.headers.host, `127.0.0.1:${upstream.port}`);
    assert.equal(got.headers['x-kept'], 'kept');
    assert.equal(got.headers['x-added'], 'by-gateway');
    assert.equal(got.headers['x-secret'], undefined);
    assert.equal(got.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(got.headers['x-forwarded-proto'], 'http');
    assert.equal(got.headers['x-forwarded-host'], 'gate.example:8443');
  });

  it('forwards the path unchanged with rewrite "" to a host:port upstream', async () => {
    await send(base, '/plain/a?b');
    assert.equal(last().url, '/plain/a?b');
  });

  it('appends to X-Forwarded-For and does not trust the client for -Proto and -Host', async () => {
    await send(base, '/remote/', {
      headers: { 'X-Forwarded-For': '10.0.0.1', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil' },
    });
    assert.equal(last().headers['x-forwarded-for'], '10.0.0.1, 127.0.0.1');
    assert.equal(last().headers['x-forwarded-proto'], 'http');
    assert.equal(last().headers['x-forwarded-host'], new URL(base).host);
  });

  it("writes its own Forwarded in place of the client's, which may name any address, host and scheme", async () => {
    await send(base, '/remote/', {
      headers: { Forwarded: 'for=203.0.113.7;host=evil.example;proto=https', Host: 'gate.example:8443' },
    });
    assert.equal(last().headers.forwarded, 'for=127.0.0.1;host="gate.example:8443";proto=http');
    await send(base, '/remote/', { headers: { Host: 'gate.example' } });
    assert.equal(last().headers.forwarded, 'for=127.0.0.1;host=gate.example;proto=http');
  });

  it("sends no Forwarded at all when remove_request_headers names it, the client's nor its own", async () => {
    await send(base, '/unforwarded/x', { headers: { Forwarded: 'for=203.0.113.7' } });
    assert.equal(last().url, '/x');
    assert.equal(last().headers.forwarded, undefined);
    assert.equal(last().headers['x-forwarded-for'], '127.0.0.1');
  });

  it('removes hop-by-hop headers on the way in', async () => {
    await send(base, '/remote/hop', {
      method: 'POST',
      body: ['x'],
      headers: {
        Connection: 'close, X-Conn-Named',
        'X-Conn-Named': 'dropped',
        'Keep-Alive': 'timeout=5',
        TE: 'trailers',
        Trailer: 'x-checksum',
        'Proxy-Authorization': 'Basic c2VjcmV0',
        'Proxy-Connection': 'keep-alive',
        Upgrade: 'h2c',
      },
    });
    const headers = last().headers;
    for (const name of [
      'x-conn-named',
      'keep-alive',
      'te',
      'trailer',
      'proxy-authorization',
      'proxy-connection',
      'upgrade',
    ]) {
      assert.equal(headers[name], undefined, name);
    }
    assert.notEqual(headers.connection, 'close, X-Conn-Named');
  });

  it('removes hop-by-hop headers on the way out and keeps the rest, set-cookie included', async () => {
    const res = await send(base, '/remote/out');
    assert.equal(res.headers['x-upstream'], 'yes');
    assert.deepEqual(res.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(res.headers['x-served-by'], 'gatehouse');
    for (const name of ['x-resp-named', 'proxy-authenticate', 'upgrade', 'keep-alive']) {
      assert.equal(res.headers[name], undefined, name);
    }
  });

  it('passes upstream statuses and bodies through as they are, errors included', async () => {
    const missing = await send(base, '/remote/status/404');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), { upstream: 404 });
    const empty = await send(base, '/remote/status/204');
    assert.equal(empty.status, 204);
    assert.equal(empty.text, '');
    const head = await send(base, '/remote/status/200', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    const untyped = await send(base, '/remote/untyped');
    assert.equal(untyped.text, 'plain bytes');
    assert.equal(untyped.headers['content-type'], undefined);
  });

  it('forwards a request body with Content-Length and one sent chunked', async () => {
    const sized = await send(base, '/remote/body', {
      method: 'POST',
      body: 'x'.repeat(500),
      headers: { 'Content-Type': 'text/plain' },
    });
    assert.deepEqual(sized.json(), { length: 500 });
    assert.equal(last().headers['content-length'], '500');
    assert.equal(last().body.toString(), 'x'.repeat(500));
    const chunked = await send(base, '/remote/body', { method: 'PUT', body: ['a'.repeat(100), 'b'.repeat(100)] });
    assert.deepEqual(chunked.json(), { length: 200 });
    assert.equal(last().body.toString(), 'a'.repeat(100) + 'b'.repeat(100));
  });

  it('answers 503 with the error body when the upstream refuses the connection', async () => {
    const res = await send(base, '/dead/x');
    assert.equal(res.status, 503);
    assert.deepEqual(res.json(), {
      code: 503,
      message: '503: Service Unavailable',
      detail: 'the upstream service is unavailable',
    });
  });

  it('answers 504 with the error body when the upstream is slower than timeout_ms', async () => {
    const res = await send(base, '/slow/x');
    assert.equal(res.status, 504);
    assert.deepEqual(res.json(), {
      code: 504,
      message: '504: Gateway Timeout',
      detail: 'the upstream service did not answer within 100 ms',
    });
  });

  it('answers 502 with the error body when the upstream hangs up', async () => {
    const res = await send(base, '/broken/x');
    assert.equal(res.status, 502);
    assert.deepEqual(res.json(), {
      code: 502,
      message: '502: Bad Gateway',
      detail: 'the upstream service failed to answer',
    });
  });

  it('passes on the part of a small answer that came, then cuts it, as Envoy resets the stream, when it stops for longer than timeout_ms', async () => {
    const answer = await partialAnswerAfterHead(
      base,
      STALL_TIMEOUTS_MS.map((ms) => `/stall-${ms}/stall`),
    );
    assert.deepEqual(answer, { status: 200, body: '{"half":', whole: false });
  });

  it('passes on the part of a small answer that came, then cuts it, when the upstream hangs up halfway through', async () => {
    assert.deepEqual(await partialAnswer(base, '/cut-short/cut'), { status: 200, body: '{"half":', whole: false });
    assert.equal((await send(base, '/remote/x')).status, 200);
  });
});

describe('gateway remote client abort', () => {
  it('cancels the upstream request when the client leaves before the answer', async () => {
    let arrive!: (req: http.IncomingMessage) => void;
    const arrived = new Promise<http.IncomingMessage>((resolve) => (arrive = resolve));
    const up = await listen((req) => arrive(req));
    const gateway = createGateway({ config: configOf(mapping('/hang/', up.url, { timeout_ms: 60_000 })) });
    const gw = await listen(gateway.app.callback());
    try {
      const client = http.get(`${gw.url}/hang/x`, { agent: false });
      client.on('error', () => undefined);
      const upstreamReq = await arrived;
      const closed = once(upstreamReq.socket, 'close');
      client.destroy();
      await closed;
    } finally {
      await close(gw.server);
      await gateway.close();
      await close(up.server);
    }
  });
});

describe('gateway remote streaming', () => {
  let gateway: Gateway;
  let server: http.Server;
  let base: string;
  let upstream: Awaited<ReturnType<typeof listen>>;
  const events: string[] = [];
  let upstreamRes: http.ServerResponse | undefined;
  let firstChunkSeen!: () => void;

  before(async () => {
    upstream = await listen((req, res) => {
      upstreamRes = res;
      req.once('data', (chunk: Buffer) => {
        events.push(`upstream got ${chunk.toString()}`);
        firstChunkSeen();
      });
      req.on('end', () => {
        events.push('upstream got the end');
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first;');
      });
    });
    gateway = createGateway({ config: configOf(mapping('/s/', upstream.url)) });
    ({ server, url: base } = await listen(gateway.app.callback()));
  });

  after(async () => {
    await close(server);
    await gateway.close();
    await close(upstream.server);
  });

  it('streams the request body and the response body without waiting for either to end', async () => {
    const seen = new Promise<void>((resolve) => (firstChunkSeen = resolve));
    const req = http.request(`${base}/s/stream`, { method: 'POST', agent: false });
    req.write('one;');
    await seen;
    events.push('client sends the rest');
    req.end('two;');
    const [res] = (await once(req, 'response')) as [http.IncomingMessage];
    const [first] = (await once(res, 'data')) as [Buffer];
    assert.equal(first.toString(), 'first;');
    events.push('client got the first part');
    upstreamRes!.end('second;');
    let rest = '';
    for await (const chunk of res) rest += chunk;
    assert.equal(rest, 'second;');
    assert.deepEqual(events, [
      'upstream got one;',
      'client sends the rest',
      'upstream got the end',
      'client got the first part',
    ]);
  });
});

describe('gateway remote routing inside a host app', () => {
  it('leaves the client address and protocol readable after it forwarded a request body', async () => {
    const upstream = await recordingUpstream();
    const gateway = createGateway({ config: configOf(mapping('/up/', `127.0.0.1:${upstream.port}`)) });
    const host = new Koa();
    const seen: string[][] = [];
    host.use(async (ctx, next) => {
      await next();
      seen.push([ctx.ip, ctx.protocol, ctx.href]);
    });
    host.use(mount('/gw', gateway.app));
    const { server, url } = await listen(host.callback());
    try {
      const res = await send(url, '/gw/up/x', { method: 'POST', body: 'payload' });
      assert.equal(res.status, 200, res.text);
      assert.equal(upstream.received[0].body.toString(), 'payload');
      assert.deepEqual(seen, [['127.0.0.1', 'http', `${url}/gw/up/x`]]);
    } finally {
      await close(server);
      await gateway.close();
      await close(upstream.server);
    }
  });
});

describe('gateway remote routing behind a trusted proxy', () => {
  it("appends the peer to the client's X-Forwarded-For and passes its -Proto and -Host on", async () => {
    const upstream = await recordingUpstream();
    const gateway = createGateway({
      trustProxy: true,
      config: configOf(mapping('/up/', `127.0.0.1:${upstream.port}`)),
    });
    const gw = await listen(gateway.app.callback());
    try {
      await send(gw.url, '/up/x', {
        headers: {
          'X-Forwarded-For': '203.0.113.7, 10.0.0.2',
          'X-Forwarded-Proto': 'https',
          'X-Forwarded-Host': 'public.example',
        },
      });
      const got = upstream.received[0].headers;
      assert.equal(got['x-forwarded-for'], '203.0.113.7, 10.0.0.2, 127.0.0.1');
      assert.equal(got['x-forwarded-proto'], 'https');
      assert.equal(got['x-forwarded-host'], 'public.example');
      assert.equal(got.forwarded, 'for=127.0.0.1;host=public.example;proto=https');
    } finally {
      await close(gw.server);
      await gateway.close();
      await close(upstream.server);
    }
  });

  it("appends its own element to the proxy's Forwarded, as RFC 7239 has each proxy do", async () => {
    const upstream = await recordingUpstream();
    const gateway = createGateway({
      trustProxy: true,
      config: configOf(mapping('/up/', `127.0.0.1:${upstream.port}`)),
    });
    const gw = await listen(gateway.app.callback());
    try {
      await send(gw.url, '/up/x', {
        headers: {
          Forwarded: 'for=203.0.113.7;proto=https',
          'X-Forwarded-Proto': 'https',
          'X-Forwarded-Host': 'public.example',
        },
      });
      assert.equal(
        upstream.received[0].headers.forwarded,
        'for=203.0.113.7;proto=https, for=127.0.0.1;host=public.example;proto=https',
      );
    } finally {
      await close(gw.server);
      await gateway.close();
      await close(upstream.server);
    }
  });
});

describe('gateway remote routing with timeout_ms: 0', () => {
  it('waits as long as the upstream takes, where a timeout answers 504', async () => {
    const late = await listen((_req, res) => setTimeout(() => res.end('late'), 150));
    const gateway = createGateway({
      config: configOf(
        mapping('/patient/', late.url, { timeout_ms: 0 }),
        mapping('/hasty/', late.url, { timeout_ms: 50 }),
      ),
    });
    const gw = await listen(gateway.app.callback());
    try {
      const patient = await send(gw.url, '/patient/x');
      assert.equal(patient.status, 200);
      assert.equal(patient.text, 'late');
      assert.equal((await send(gw.url, '/hasty/x')).status, 504);
    } finally {
      await close(gw.server);
      await gateway.close();
      await close(late.server);
    }
  });
});

describe('gateway remote routing from an IPv6 client', () => {
  it('writes the address in Forwarded quoted and in brackets, as RFC 7239 spells it', async () => {
    const upstream = await recordingUpstream();
    const gateway = createGateway({ config: configOf(mapping('/up/', `127.0.0.1:${upstream.port}`)) });
    const server = http.createServer(gateway.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '::1', resolve));
    try {
      const { port } = server.address() as import('node:net').AddressInfo;
      const req = http.get({ host: '::1', port, path: '/up/x', headers: { Host: '[::1]' }, agent: false });
      const [res] = (await once(req, 'response')) as [http.IncomingMessage];
      res.resume();
      await once(res, 'end');
      assert.equal(upstream.received[0].headers.forwarded, 'for="[::1]";host="[::1]";proto=http');
      assert.equal(upstream.received[0].headers['x-forwarded-for'], '::1');
    } finally {
      await close(server);
      await gateway.close();
      await close(upstream.server);
    }
  });
});

describe('gateway remote routing of a slow upload', () => {
  let gateway: Gateway;
  let gw: Awaited<ReturnType<typeof listen>>;
  let upstream: Awaited<ReturnType<typeof listen>>;

  before(async () => {
    upstream = await listen((req, res) => {
      if (req.url === '/early') {
        // Answers before the body is in, and takes its time over the rest of the answer.
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first;');
        req.resume();
        setTimeout(() => res.end('last'), 300);
        return;
      }
      let length = 0;
      req.on('data', (chunk: Buffer) => (length += chunk.length));
      // /late never answers: only timeout_ms ends it.
      req.on('end', () =>
        req.url === '/late' ? req.socket.once('close', () => res.destroy()) : res.end(`got ${length}`),
      );
    });
    // Long enough that an answer at once is never late on a busy machine; uploads longer still show where it counts from.
    gateway = createGateway({ config: configOf(mapping('/up/', upstream.url, { timeout_ms: 1000 })) });
    gw = await listen(gateway.app.callback());
  });

  after(async () => {
    await close(gw.server);
    await gateway.close();
    await close(upstream.server);
  });

  /** Sends a chunked body of `count` chunks, `gapMs` apart, and reads the answer. */
  async function upload(path: string, count: number, gapMs: number): Promise<{ status: number; text: string }> {
    const req = http.request(`${gw.url}${path}`, { method: 'POST', agent: false });
    const answer = once(req, 'response') as Promise<[http.IncomingMessage]>;
    for (let i = 0; i < count; i++) {
      req.write('x');
      await new Promise((resolve) => setTimeout(resolve, gapMs));
    }
    req.end();
    const [res] = await answer;
    let text = '';
    for await (const chunk of res) text += chunk;
    return { status: res.statusCode!, text };
  }

  it('counts timeout_ms from the end of the request body, as Envoy does, so an upload longer than it is no 504', async () => {
    assert.deepEqual(await upload('/up/x', 5, 300), { status: 200, text: 'got 5' });
  });

  it('still answers 504 when the upstream takes longer than timeout_ms once the body is in', async () => {
    const res = await upload('/up/late', 2, 10);
    assert.equal(res.status, 504);
    assert.equal(JSON.parse(res.text).detail, 'the upstream service did not answer within 1000 ms');
  });

  it('does not cut an answer that began before the body was in', async () => {
    assert.deepEqual(await upload('/up/early', 3, 50), { status: 200, text: 'first;last' });
  });
});
