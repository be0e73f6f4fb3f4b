import assert from 'node:assert/strict';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { send } from '../../../support/client';
import { type Echo } from '../../../support/modules';
import { useRemoteAuthRig } from '../../../support/remote-auth-rig';

/** `include_body`: the auth service is sent the request body, and the backend still gets all of it. */
describe('an AuthService with include_body, in the gateway', () => {
  const rig = useRemoteAuthRig((_req, res) => res.writeHead(201, { 'content-type': 'text/plain' }).end('created'));
  const json = JSON.stringify({ hotel_id: 'h-1', nights: 3, note: 'x'.repeat(200) });

  it('sends a body shorter than max_bytes whole, with its length, and the backend gets it too', async () => {
    await rig.start({ include_body: { max_bytes: 4096, allow_partial: false } });
    const res = await send(rig.base, '/remote/bookings/', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: json,
    });
    assert.equal(res.status, 201);
    assert.equal(rig.auth.received[0].method, 'POST');
    assert.equal(rig.auth.received[0].body.toString(), json);
    assert.equal(rig.auth.received[0].headers['content-length'], String(Buffer.byteLength(json)));
    assert.equal(
      rig.auth.received[0].headers['content-type'],
      undefined,
      'as in Emissary: only the headers it always sends, and those allowed',
    );
    assert.equal(rig.backend.received[0].body.toString(), json);
    assert.equal(rig.backend.received[0].headers['content-length'], String(Buffer.byteLength(json)));
  });

  it('lets an in-process module read the whole JSON body after the auth service read it', async () => {
    await rig.start({ include_body: { max_bytes: 64, allow_partial: true } });
    for (const body of [json, [json.slice(0, 30), json.slice(30, 100), json.slice(100)]]) {
      const res = await send(rig.base, '/echo/json', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual((res.json() as Echo).body, JSON.parse(json));
    }
    assert.deepEqual(
      rig.auth.received.map((r) => r.body.toString()),
      [json.slice(0, 64), json.slice(0, 64)],
    );
  });

  it('sends the first max_bytes of a longer body with allow_partial, chunked or not, and the backend gets all of it', async () => {
    await rig.start({ include_body: { max_bytes: 10, allow_partial: true } });
    const whole = 'abcdefghijklmnopqrstuvwxyz'.repeat(1000);
    for (const body of [whole, [whole.slice(0, 5), whole.slice(5, 15), whole.slice(15)]]) {
      const res = await send(rig.base, '/remote/upload', { method: 'PUT', body });
      assert.equal(res.status, 201);
    }
    assert.deepEqual(
      rig.auth.received.map((r) => [r.body.toString(), r.headers['content-length']]),
      [
        ['abcdefghij', '10'],
        ['abcdefghij', '10'],
      ],
    );
    assert.deepEqual(
      rig.backend.received.map((r) => r.body.toString() === whole),
      [true, true],
    );
  });

  it('waits for a body that comes in pieces, and takes one of exactly max_bytes whole', async () => {
    await rig.start({ include_body: { max_bytes: 12, allow_partial: false } });
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(rig.base);
      const req = http.request(
        { host: url.hostname, port: url.port, path: '/remote/slow', method: 'POST', agent: false },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
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
    assert.equal(rig.auth.received[0].body.toString(), 'abcdefghijkl');
    assert.equal(rig.backend.received[0].body.toString(), 'abcdefghijkl');
  });

  it('answers 413 for a longer body without allow_partial, chunked or not, before asking anyone', async () => {
    await rig.start({ include_body: { max_bytes: 10, allow_partial: false } });
    for (const body of ['x'.repeat(11), ['xxxxx', 'xxxxx', 'x']]) {
      const res = await send(rig.base, '/remote/upload', { method: 'PUT', body });
      assert.equal(res.status, 413);
      assert.equal(res.json().code, 413);
      assert.match(res.json().detail, /10 bytes/);
    }
    assert.equal(rig.auth.received.length, 0);
    assert.equal(rig.backend.received.length, 0);
  });

  it('answers 413 whatever failure_mode_allow says, as Envoy does', async () => {
    await rig.start({ include_body: { max_bytes: 10, allow_partial: false }, failure_mode_allow: true });
    const res = await send(rig.base, '/remote/upload', { method: 'PUT', body: 'x'.repeat(11) });
    assert.equal(res.status, 413);
    assert.equal(rig.backend.received.length, 0);
  });

  it('sends the first 4096 bytes with allow_request_body, as Emissary reads it', async () => {
    await rig.start({ allow_request_body: true });
    const body = 'y'.repeat(5000);
    const res = await send(rig.base, '/remote/upload', { method: 'POST', body });
    assert.equal(res.status, 201);
    assert.equal(rig.auth.received[0].body.length, 4096);
    assert.equal(rig.backend.received[0].body.length, 5000);
  });

  it('sends no body without include_body, and one that is refused never reaches the backend', async () => {
    rig.answer = (_req, res) => res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    await rig.start({});
    const res = await send(rig.base, '/remote/upload', { method: 'POST', body: 'secret payload' });
    assert.equal(res.status, 401);
    assert.equal(rig.auth.received[0].body.length, 0);
    assert.equal(rig.auth.received[0].headers['content-length'], '0');
    assert.equal(rig.backend.received.length, 0);
  });

  it('says whether the body is cut in x-envoy-auth-partial-body when allowed_request_headers names it, as Envoy does', async () => {
    await rig.start({
      include_body: { max_bytes: 10, allow_partial: true },
      allowed_request_headers: ['X-Envoy-Auth-Partial-Body'],
    });
    // The client's own word is never taken: it would tell the auth service a cut body is whole.
    const claim = { 'x-envoy-auth-partial-body': 'false' };
    assert.equal(
      (await send(rig.base, '/remote/upload', { method: 'POST', headers: claim, body: 'x'.repeat(11) })).status,
      201,
    );
    assert.equal(
      (await send(rig.base, '/remote/upload', { method: 'POST', headers: claim, body: [Buffer.alloc(11, 'y')] }))
        .status,
      201,
    );
    assert.equal(
      (
        await send(rig.base, '/remote/upload', {
          method: 'POST',
          headers: { 'x-envoy-auth-partial-body': 'true' },
          body: 'x'.repeat(10),
        })
      ).status,
      201,
    );
    assert.equal((await send(rig.base, '/remote/x', { headers: claim })).status, 201);
    assert.deepEqual(
      rig.auth.received.map((r) => r.headers['x-envoy-auth-partial-body']),
      ['true', 'true', 'false', undefined],
    );
  });

  it('sends no x-envoy-auth-partial-body unless allowed_request_headers names it', async () => {
    await rig.start({ include_body: { max_bytes: 10, allow_partial: true } });
    await send(rig.base, '/remote/upload', { method: 'POST', body: 'x'.repeat(11) });
    assert.equal(rig.auth.received[0].headers['x-envoy-auth-partial-body'], undefined);
  });

  it('asks at once about a request without a body', async () => {
    await rig.start({ include_body: { max_bytes: 10, allow_partial: false } });
    const res = await send(rig.base, '/remote/x');
    assert.equal(res.status, 201);
    assert.equal(rig.auth.received[0].body.length, 0);
  });

  it("answers with the gateway's 413 for a chunked body over the gateway's own limit", async () => {
    await rig.start({ include_body: { max_bytes: 4 * 1024 * 1024, allow_partial: true } });
    const chunk = Buffer.alloc(256 * 1024, 'z');
    const res = await send(rig.base, '/remote/upload', { method: 'POST', body: [chunk, chunk, chunk, chunk, chunk] });
    assert.equal(res.status, 413);
    assert.equal(rig.auth.received.length, 0);
    assert.equal(rig.backend.received.length, 0);
  });
});
