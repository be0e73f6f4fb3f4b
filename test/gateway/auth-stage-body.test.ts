import assert from 'node:assert/strict';
import http, { type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGateway, type Gateway } from '../../src/gateway';
import { createAuthStage } from '../../src/gateway/auth-stage';
import { captureLogger } from '../auth/support';
import { close, configOf, echoModule, listen, mapping, recordingUpstream, registry, send, type Echo, type Received } from './helpers';

type Respond = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

/** `include_body`: the auth service is sent the request body, and the backend still gets all of it. */
describe('an AuthService with include_body, in the gateway', () => {
  let answer: Respond;
  let auth: Awaited<ReturnType<typeof recordingUpstream>>;
  let backend: Awaited<ReturnType<typeof recordingUpstream>>;
  let gateway: Gateway | undefined;
  let server: Server | undefined;
  let base = '';

  const start = async (fields: Record<string, unknown>) => {
    gateway = createGateway({
      modules: registry(echoModule('echo')),
      stages: { auth: (record, modules) => createAuthStage(record, modules, { logger: captureLogger() }) },
      config: configOf(
        mapping('/remote', backend.url),
        mapping('/echo', 'echo'),
        { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authentication', auth_service: `127.0.0.1:${auth.port}`, ...fields },
      ),
    });
    const up = await listen(gateway.app.callback());
    server = up.server;
    base = up.url;
  };
  const json = JSON.stringify({ hotel_id: 'h-1', nights: 3, note: 'x'.repeat(200) });

  before(async () => {
    auth = await recordingUpstream((req, res, received) => answer(req, res, received));
    backend = await recordingUpstream((_req, res) => res.writeHead(201, { 'content-type': 'text/plain' }).end('created'));
  });
  beforeEach(() => {
    auth.received.length = 0;
    backend.received.length = 0;
    answer = (_req, res) => res.writeHead(200, { 'x-travel-user': 'alice' }).end();
  });
  afterEach(async () => {
    await close(server);
    await gateway?.close();
    server = undefined;
    gateway = undefined;
  });
  after(async () => {
    await close(auth.server);
    await close(backend.server);
  });

  it('sends a body shorter than max_bytes whole, with its length, and the backend gets it too', async () => {
    await start({ include_body: { max_bytes: 4096, allow_partial: false } });
    const res = await send(base, '/remote/bookings/', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: json });
    assert.equal(res.status, 201);
    assert.equal(auth.received[0].method, 'POST');
    assert.equal(auth.received[0].body.toString(), json);
    assert.equal(auth.received[0].headers['content-length'], String(Buffer.byteLength(json)));
    assert.equal(auth.received[0].headers['content-type'], undefined, 'as in Emissary: only the headers it always sends, and those allowed');
    assert.equal(backend.received[0].body.toString(), json);
    assert.equal(backend.received[0].headers['content-length'], String(Buffer.byteLength(json)));
  });

  it('lets an in-process module read the whole JSON body after the auth service read it', async () => {
    await start({ include_body: { max_bytes: 64, allow_partial: true } });
    for (const body of [json, [json.slice(0, 30), json.slice(30, 100), json.slice(100)]]) {
      const res = await send(base, '/echo/json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual((res.json() as Echo).body, JSON.parse(json));
    }
    assert.deepEqual(
      auth.received.map((r) => r.body.toString()),
      [json.slice(0, 64), json.slice(0, 64)],
    );
  });

  it('sends the first max_bytes of a longer body with allow_partial, chunked or not, and the backend gets all of it', async () => {
    await start({ include_body: { max_bytes: 10, allow_partial: true } });
    const whole = 'abcdefghijklmnopqrstuvwxyz'.repeat(1000);
    for (const body of [whole, [whole.slice(0, 5), whole.slice(5, 15), whole.slice(15)]]) {
      const res = await send(base, '/remote/upload', { method: 'PUT', body });
      assert.equal(res.status, 201);
    }
    assert.deepEqual(
      auth.received.map((r) => [r.body.toString(), r.headers['content-length']]),
      [
        ['abcdefghij', '10'],
        ['abcdefghij', '10'],
      ],
    );
    assert.deepEqual(
      backend.received.map((r) => r.body.toString() === whole),
      [true, true],
    );
  });

  it('waits for a body that comes in pieces, and takes one of exactly max_bytes whole', async () => {
    await start({ include_body: { max_bytes: 12, allow_partial: false } });
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(base);
      const req = http.request({ host: url.hostname, port: url.port, path: '/remote/slow', method: 'POST', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      void (async () => {
        for (const piece of ['abcd', 'efgh', 'ijkl']) {
          req.write(piece);
          await sleep(30);
        }
        req.end();
      })();
    });
    assert.equal(status, 201);
    assert.equal(auth.received[0].body.toString(), 'abcdefghijkl');
    assert.equal(backend.received[0].body.toString(), 'abcdefghijkl');
  });

  it('answers 413 for a longer body without allow_partial, chunked or not, before asking anyone', async () => {
    await start({ include_body: { max_bytes: 10, allow_partial: false } });
    for (const body of ['x'.repeat(11), ['xxxxx', 'xxxxx', 'x']]) {
      const res = await send(base, '/remote/upload', { method: 'PUT', body });
      assert.equal(res.status, 413);
      assert.equal(res.json().code, 413);
      assert.match(res.json().detail, /10 bytes/);
    }
    assert.equal(auth.received.length, 0);
    assert.equal(backend.received.length, 0);
  });

  it('answers 413 whatever failure_mode_allow says, as Envoy does', async () => {
    await start({ include_body: { max_bytes: 10, allow_partial: false }, failure_mode_allow: true });
    const res = await send(base, '/remote/upload', { method: 'PUT', body: 'x'.repeat(11) });
    assert.equal(res.status, 413);
    assert.equal(backend.received.length, 0);
  });

  it('sends the first 4096 bytes with allow_request_body, as Emissary reads it', async () => {
    await start({ allow_request_body: true });
    const body = 'y'.repeat(5000);
    const res = await send(base, '/remote/upload', { method: 'POST', body });
    assert.equal(res.status, 201);
    assert.equal(auth.received[0].body.length, 4096);
    assert.equal(backend.received[0].body.length, 5000);
  });

  it('sends no body without include_body, and one that is refused never reaches the backend', async () => {
    answer = (_req, res) => res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    await start({});
    const res = await send(base, '/remote/upload', { method: 'POST', body: 'secret payload' });
    assert.equal(res.status, 401);
    assert.equal(auth.received[0].body.length, 0);
    assert.equal(auth.received[0].headers['content-length'], '0');
    assert.equal(backend.received.length, 0);
  });

  it('says whether the body is cut in x-envoy-auth-partial-body when allowed_request_headers names it, as Envoy does', async () => {
    await start({ include_body: { max_bytes: 10, allow_partial: true }, allowed_request_headers: ['X-Envoy-Auth-Partial-Body'] });
    // The client's own word is never taken: it would tell the auth service a cut body is whole.
    const claim = { 'x-envoy-auth-partial-body': 'false' };
    assert.equal((await send(base, '/remote/upload', { method: 'POST', headers: claim, body: 'x'.repeat(11) })).status, 201);
    assert.equal((await send(base, '/remote/upload', { method: 'POST', headers: claim, body: [Buffer.alloc(11, 'y')] })).status, 201);
    assert.equal((await send(base, '/remote/upload', { method: 'POST', headers: { 'x-envoy-auth-partial-body': 'true' }, body: 'x'.repeat(10) })).status, 201);
    assert.equal((await send(base, '/remote/x', { headers: claim })).status, 201);
    assert.deepEqual(
      auth.received.map((r) => r.headers['x-envoy-auth-partial-body']),
      ['true', 'true', 'false', undefined],
    );
  });

  it('sends no x-envoy-auth-partial-body unless allowed_request_headers names it', async () => {
    await start({ include_body: { max_bytes: 10, allow_partial: true } });
    await send(base, '/remote/upload', { method: 'POST', body: 'x'.repeat(11) });
    assert.equal(auth.received[0].headers['x-envoy-auth-partial-body'], undefined);
  });

  it('asks at once about a request without a body', async () => {
    await start({ include_body: { max_bytes: 10, allow_partial: false } });
    const res = await send(base, '/remote/x');
    assert.equal(res.status, 201);
    assert.equal(auth.received[0].body.length, 0);
  });

  it("answers with the gateway's 413 for a chunked body over the gateway's own limit", async () => {
    await start({ include_body: { max_bytes: 4 * 1024 * 1024, allow_partial: true } });
    const chunk = Buffer.alloc(256 * 1024, 'z');
    const res = await send(base, '/remote/upload', { method: 'POST', body: [chunk, chunk, chunk, chunk, chunk] });
    assert.equal(res.status, 413);
    assert.equal(auth.received.length, 0);
    assert.equal(backend.received.length, 0);
  });
});
