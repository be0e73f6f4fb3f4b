import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { close, listen } from '../../support/server';
import { mapping } from '../../support/records';
import { partialAnswerAfterHead, send, type Answer } from '../../support/client';
import { testGateway, type TestGateway } from '../../support/reporting-gateway';
import { testUpstream, type TestUpstream } from '../../support/upstreams';

/** Sends `sent` of a body said to be `declared` bytes long, then nothing more, and reads the answer. */
function stalledUpload(base: string, path: string, declared: number, sent: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { 'Content-Length': String(declared) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.write(sent);
  });
}

/** The idle_timeout_ms of the Mappings to an upstream that stops after half its answer, tried in turn. */
const PARTIAL_IDLE_MS = [150, 600, 2400, 9600];

describe('connection timeouts and lifetimes', () => {
  let up: TestUpstream;
  let lasting: TestUpstream;
  let silent: net.Server;
  let partial: Awaited<ReturnType<typeof listen>>;
  let rig: TestGateway;

  before(async () => {
    up = await testUpstream();
    // Asks for its connections to be kept 10 minutes, and never closes one itself.
    lasting = await testUpstream('127.0.0.1', { 'Keep-Alive': 'timeout=600' });
    lasting.server.keepAliveTimeout = 0;
    // Takes connections, reads what comes, and never answers TLS's hello.
    silent = net.createServer((socket) => socket.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    partial = await listen((_req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('{"half":');
    });
    rig = await testGateway([
      mapping('/connect/', `https://127.0.0.1:${(silent.address() as AddressInfo).port}`, {
        name: 'connect',
        connect_timeout_ms: 100,
      }),
      mapping('/idle/', `http://${up.address}`, { name: 'idle', timeout_ms: 0, idle_timeout_ms: 100 }),
      mapping('/idle-retry/', `http://${up.address}`, {
        name: 'idle-retry',
        idle_timeout_ms: 100,
        retry_policy: { retry_on: '5xx' },
      }),
      // The silence after the half sent at once is what must end the answer: see partialAnswerAfterHead.
      ...PARTIAL_IDLE_MS.map((ms) =>
        mapping(`/partial-${ms}/`, partial.url, { name: `partial-${ms}`, timeout_ms: 0, idle_timeout_ms: ms }),
      ),
      // No timeout_ms of their own (0): a busy machine may take longer than the default 3 s to answer, which is no 504 these tests are about.
      mapping('/cluster-idle/', `http://${lasting.address}`, {
        name: 'cluster-idle',
        timeout_ms: 0,
        cluster_idle_timeout_ms: 100,
      }),
      mapping('/lifetime/', `http://${lasting.address}`, {
        name: 'lifetime',
        timeout_ms: 0,
        cluster_max_connection_lifetime_ms: 100,
      }),
    ]);
  });

  after(async () => {
    up.release();
    await rig.close();
    await new Promise((resolve) => silent.close(resolve));
    await Promise.all([up.close(), lasting.close(), close(partial.server)]);
  });

  it('answers 503 with the error body when no connection is made within connect_timeout_ms, TLS handshake included, and closes the one begun', async () => {
    const res = await send(rig.base, '/connect/');
    assert.equal(res.status, 503);
    assert.deepEqual(res.json(), {
      code: 503,
      message: '503: Service Unavailable',
      detail: 'the upstream service is unavailable',
    });
    assert.ok(rig.reported.errors.includes('connect refused'));
    // Left open, the connection would hold the server's close() (in after) for good.
    await new Promise<void>(function wait(resolve) {
      silent.getConnections((_err, n) => (n === 0 ? resolve() : setImmediate(wait, resolve)));
    });
  });

  it('answers 504 when the upstream is silent for idle_timeout_ms before its answer, whatever timeout_ms', async () => {
    up.fallback = 'hold';
    const res = await send(rig.base, '/idle/');
    assert.equal(res.status, 504);
    assert.equal(res.json().detail, 'the upstream service was silent for idle_timeout_ms (100 ms)');
    up.release();
    up.fallback = 200;
  });

  it('passes on the part of an answer that came, then cuts it, as Envoy resets the stream, when it stops for idle_timeout_ms before its end', async () => {
    const answer = await partialAnswerAfterHead(
      rig.base,
      PARTIAL_IDLE_MS.map((ms) => `/partial-${ms}/`),
    );
    assert.deepEqual(answer, { status: 200, body: '{"half":', whole: false });
  });

  it("answers 408, and closes the connection, when the client's upload is silent for idle_timeout_ms", async () => {
    // Streamed to the upstream, or read to be sent again by a retry.
    for (const path of ['/idle/', '/idle-retry/']) {
      const res = await stalledUpload(rig.base, path, 100, 'only ten b');
      assert.equal(res.status, 408, path);
      assert.equal(res.headers.connection, 'close');
      assert.equal(res.json().detail, 'the request body stalled: nothing came for idle_timeout_ms (100 ms)');
    }
  });

  it('closes an idle connection after cluster_idle_timeout_ms, though the upstream would keep it 10 minutes', async () => {
    const closed = lasting.connections.closed;
    assert.equal((await send(rig.base, '/cluster-idle/')).status, 200);
    await lasting.closedConnection(closed + 1);
  });

  it('sends no request on a connection older than cluster_max_connection_lifetime_ms', async () => {
    lasting.got.length = 0;
    // Busy all along, one connection would do for ever; after its lifetime the next request takes a new one.
    do assert.equal((await send(rig.base, '/lifetime/')).status, 200);
    while (lasting.got.at(-1)!.connection === lasting.got[0].connection);
  });
});
