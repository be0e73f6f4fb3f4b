import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import Koa from 'koa';
import request from 'supertest';
import { createLogger } from '../../src/telemetry';
import { captureLog, type LogCapture } from '../support/log-capture';
import { ALICE, basic } from '../support/credentials';
import { copyConfig, DEMO_CONFIG, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

const WRONG_PASSWORD = 'not-wonderland-7f3a';
const WRONG = basic('alice', WRONG_PASSWORD);

describe('gatehouse access log', function () {
  let running: Running;
  let log: LogCapture;
  let lines: Record<string, unknown>[];

  before(async () => {
    log = captureLog();
    // The most talkative level: nothing logged at any level may hold a credential.
    running = await startGatehouse({
      configDir: DEMO_CONFIG,
      logger: createLogger({ destination: log, level: 'trace' }),
    });
    const http = request(running.url);
    await http.get('/v1/hotels').set('Authorization', ALICE).set('X-Request-Id', 'ok-1').expect(200);
    await http.get('/v1/hotels').set('Authorization', WRONG).set('X-Request-Id', 'wrong-1').expect(401);
    // An argument the API does not know: a 400, logged without its value.
    await http
      .get('/v1/messages/1?token=s3cr3t-value')
      .set('Proxy-Authorization', WRONG)
      .set('X-Request-Id', 'public-1')
      .expect(400);
    await http.get('/nowhere').set('Cookie', `session=${WRONG_PASSWORD}`).set('X-Request-Id', 'none-1').expect(404);
    await http
      .post('/v1/hotels/bookings/')
      .set('Authorization', WRONG)
      .set('X-Request-Id', 'post-1')
      .send({ password: WRONG_PASSWORD })
      .expect(401);
    // A client naming a user itself, where no auth service is asked.
    await http.get('/nowhere').set('X-Travel-User', 'mallory').set('X-Request-Id', 'claim-1').expect(404);
    await http
      .get('/gateway/v0/check_alive')
      .set('X-Travel-User', 'mallory')
      .set('X-Request-Id', 'claim-2')
      .expect(200);
    await http.get('/gateway/v0/metrics').set('X-Travel-User', 'mallory').set('X-Request-Id', 'claim-3').expect(200);
    lines = await log.waitForLines(8, (l) => l.msg === 'request');
    // One more request, whose line comes after any line of those above: a ninth would be one too many.
    await http.get('/gateway/v0/check_alive').set('X-Request-Id', 'last-1').expect(200);
    await log.waitForLines(1, (l) => l.req_id === 'last-1');
    lines = log.lines.filter((l) => l.msg === 'request' && l.req_id !== 'last-1');
  });

  after(() => running?.stop());

  const lineOf = (id: string) => {
    const found = lines.filter((l) => l.req_id === id);
    assert.equal(found.length, 1, `one line for request ${id}`);
    return found[0];
  };

  it('writes one line a request with method, path, route, status, duration and user', () => {
    assert.equal(lines.length, 8);
    const ok = lineOf('ok-1');
    assert.deepEqual(
      { method: ok.method, path: ok.path, route: ok.route, status: ok.status, user: ok.user },
      { method: 'GET', path: '/v1/hotels', route: 'hotels-mapping', status: 200, user: 'alice' },
    );
    for (const line of lines) assert.ok(typeof line.duration_ms === 'number' && line.duration_ms >= 0);
  });

  it('names no user for a refused or public request, and unmatched for a path outside every route', () => {
    const wrong = lineOf('wrong-1');
    assert.deepEqual([wrong.route, wrong.status, wrong.user], ['hotels-mapping', 401, undefined]);
    const post = lineOf('post-1');
    assert.deepEqual([post.method, post.status, post.user], ['POST', 401, undefined]);
    const open = lineOf('public-1');
    assert.deepEqual([open.route, open.status, open.user, open.query], ['api-v1', 400, undefined, ['token']]);
    const none = lineOf('none-1');
    assert.deepEqual([none.route, none.status], ['unmatched', 404]);
  });

  it('logs and counts the health probes and the metrics scrapes under routes of their own, never as unmatched', async () => {
    assert.equal(lineOf('claim-2').route, 'gateway-health');
    assert.equal(lineOf('claim-3').route, 'gateway-metrics');
    const http = request(running.url);
    await http.get('/gateway/v0/check_ready').set('X-Request-Id', 'ready-1').expect(200);
    const [ready] = await log.waitForLines(1, (l) => l.req_id === 'ready-1');
    assert.equal(ready.route, 'gateway-health');
    const scrape = (await http.get('/gateway/v0/metrics').expect(200)).text;
    assert.match(
      scrape,
      /gatehouse_http_requests_total\{route="gateway-health",method="GET",status="200",protocol="HTTP\/1\.1"\} [1-9]/,
    );
    assert.match(
      scrape,
      /gatehouse_http_requests_total\{route="gateway-metrics",method="GET",status="200",protocol="HTTP\/1\.1"\} [1-9]/,
    );
    assert.doesNotMatch(scrape, /gatehouse_http_requests_total\{route="unmatched",method="GET",status="200",/);
  });

  it("never names the user a client's own X-Travel-User claims, on paths no auth service is asked about", () => {
    for (const id of ['claim-1', 'claim-2', 'claim-3']) assert.equal(lineOf(id).user, undefined, id);
  });

  it('never writes a credential: not the header, not its base64, not the password, not a query value', () => {
    const secrets = [
      WRONG,
      WRONG.slice('Basic '.length),
      WRONG_PASSWORD,
      ALICE,
      ALICE.slice('Basic '.length),
      'wonderland',
      's3cr3t-value',
    ];
    assert.ok(log.raw.length > lines.length, 'the other lines of the process are checked too');
    for (const raw of log.raw) {
      for (const secret of secrets) assert.ok(!raw.includes(secret), `a log line holds '${secret}': ${raw}`);
    }
  });
});

describe('gatehouse request id', function () {
  let running: Running;
  let config: TempConfig;
  /** The X-Request-Id each request reached the backend with. */
  const received: (string | undefined)[] = [];
  /** The X-Debug each request reached the backend with. */
  const debug: (string | undefined)[] = [];

  before(async () => {
    config = copyConfig();
    config.write(
      'services.yaml',
      'apiVersion: gateway/v1\nkind: Mapping\nname: echo\nprefix: /echo/\nservice: echo\nbypass_auth: true\n',
    );
    const echo = new Koa();
    echo.use((ctx) => {
      received.push(ctx.get('x-request-id') || undefined);
      debug.push(ctx.get('x-debug') || undefined);
      ctx.body = { ok: true };
    });
    running = await startGatehouse({ configDir: config.dir, modules: [{ name: 'echo', app: echo }] });
  });

  after(async () => {
    await running?.stop();
    config?.remove();
  });

  beforeEach(() => {
    received.length = 0;
    debug.length = 0;
  });

  /** The request id of each access line for `path`, in order. */
  async function loggedIds(path: string, count: number): Promise<unknown[]> {
    const lines = await running.log.waitForLines(count, (l) => l.msg === 'request' && l.path === path);
    return lines.map((l) => l.req_id);
  }

  it("hands the client's well-formed id to the backend, the log and the response alike", async () => {
    const res = await request(running.url).get('/echo/plain').set('X-Request-Id', 'client-7').expect(200);
    assert.equal(res.headers['x-request-id'], 'client-7');
    assert.deepEqual(received, ['client-7']);
    assert.deepEqual(await loggedIds('/echo/plain', 1), ['client-7']);
  });

  it('gives the backend the id of the log and the response when the client names X-Request-Id in Connection', async () => {
    // The client's copy is hop-by-hop then: it is not the id, and a new one is made.
    const res = await request(running.url)
      .get('/echo/nominated')
      .set('X-Request-Id', 'client-8')
      .set('Connection', 'keep-alive, X-Request-Id')
      .expect(200);
    const id = res.headers['x-request-id'];
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(received, [id]);
    assert.deepEqual(await loggedIds('/echo/nominated', 1), [id]);
  });

  it('gives the backend the id it made when the client sends none but names the header in Connection', async () => {
    const res = await request(running.url).get('/echo/named-only').set('Connection', 'x-request-id').expect(200);
    const id = res.headers['x-request-id'];
    assert.match(String(id), /^[0-9a-f-]{36}$/);
    assert.deepEqual(received, [id]);
    assert.deepEqual(await loggedIds('/echo/named-only', 1), [id]);
  });

  it('still drops the other headers the client names in Connection', async () => {
    const res = await request(running.url)
      .get('/echo/other')
      .set('X-Request-Id', 'client-9')
      .set('X-Debug', 'yes')
      .set('Connection', 'X-Debug, X-Request-Id')
      .expect(200);
    const id = res.headers['x-request-id'];
    assert.notEqual(id, 'client-9');
    assert.deepEqual(received, [id]);
    assert.deepEqual(debug, [undefined]);
  });
});

describe('gatehouse access log of requests the server answers itself', function () {
  let running: Running;

  before(async () => {
    running = await startGatehouse({ configDir: DEMO_CONFIG });
  });

  after(() => running?.stop());

  it('writes a line for headers over the limit and for CONNECT, and counts them on the diag page and in the metrics', async () => {
    const { port } = new URL(running.url);
    const send = async (text: string) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      await once(socket, 'connect');
      socket.end(text);
      socket.resume();
      await once(socket, 'close');
    };
    await send(`GET /v1/messages/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    await send('CONNECT 10.0.0.1:22 HTTP/1.1\r\nHost: 10.0.0.1:22\r\n\r\n');
    const lines = await running.log.waitForLines(2, (l) => l.msg === 'request');
    assert.deepEqual(
      lines.map((l) => [l.method, l.path, l.route, l.status]),
      [
        ['-', '-', 'unmatched', 431],
        ['CONNECT', '10.0.0.1:22', 'unmatched', 501],
      ],
    );
    const scrape = await request(running.url).get('/gateway/v0/metrics').expect(200);
    assert.match(
      scrape.text,
      /gatehouse_http_requests_total\{route="unmatched",method="OTHER",status="431",protocol="HTTP\/1\.1"\} 1/,
    );
    assert.match(
      scrape.text,
      /gatehouse_http_requests_total\{route="unmatched",method="CONNECT",status="501",protocol="HTTP\/1\.1"\} 1/,
    );
  });
});
