/**
 * Each response header is written in one spelling, whoever sets it: the
 * gateway, a module, the error handler, the proxy (undici hands it the
 * upstream's names in lower case), an upstream cluster (its retries, its
 * circuit breaker, its balancing cookie), an Emissary redirect, CORS, a
 * tunnel's 101, and the auth service run alone. Read from the raw header
 * lines of the answers.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { createAuthService, type AuthService } from '../../src/auth';
import { headerName } from '../../src/http';
import { ALICE } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';
import { echoUpstream, servicesYaml, WEBSOCKET_HEADERS, type EchoUpstream } from '../support/websocket';

const LIMITED = {
  gateway: [{ request_label_group: [{ 'x-gateway-test-allow': { header: 'x-gateway-test-allow' } }] }],
};

/** One request and the header names of its answer, as they were on the wire. */
function namesOf(
  base: string,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<{ status: number; names: string[] }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = http.request({ host: url.hostname, port: url.port, path, method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, names: res.rawHeaders.filter((_, i) => i % 2 === 0) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends `text` on a connection of its own and resolves the status and header names of the answer's head, as written. */
function rawHead(port: number, text: string): Promise<{ status: number; names: string[] }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let reply = '';
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      reply += chunk;
      const end = reply.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.destroy();
      const lines = reply.slice(0, end).split('\r\n');
      resolve({
        status: Number(lines[0].split(' ')[1]),
        names: lines.slice(1).map((line) => line.slice(0, line.indexOf(':'))),
      });
    });
  });
}

describe('gatehouse response header names', function () {
  let upstream: http.Server;
  /** The upstream's answers to requests it holds, until the test lets them go. */
  const held: http.ServerResponse[] = [];
  let sockets: EchoUpstream;
  let config: TempConfig;
  let running: Running;
  let auth: AuthService;
  let authServer: http.Server;
  /** Every answer's status and header names, by what was asked. */
  const answers = new Map<string, { status: number; names: string[] }>();

  before(async () => {
    // Lower case, as many servers write them; undici reads every name in lower case anyway.
    upstream = http.createServer((req, res) => {
      const failing = req.url!.includes('fail');
      res.writeHead(failing ? 503 : 200, {
        'content-type': 'text/plain',
        etag: '"v1"',
        'x-upstream-note': 'hi',
        'www-authenticate': 'Bearer',
      });
      if (req.url!.includes('hold')) {
        held.push(res);
        upstream.emit('held');
      } else res.end(failing ? 'down' : 'up');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    sockets = await echoUpstream();
    config = copyConfig();
    const up = `127.0.0.1:${(upstream.address() as net.AddressInfo).port}`;
    config.write(
      'extra.yaml',
      servicesYaml(
        {
          name: 'up',
          prefix: '/up/',
          service: up,
          bypass_auth: true,
          labels: LIMITED,
          add_response_headers: { 'x-added-by': 'gateway', etag: { value: '"edited"', append: false } },
          cors: { origins: 'https://app.example', exposed_headers: ['x-upstream-note'] },
        },
        {
          name: 'limited-api',
          prefix: '/limited/',
          rewrite: '/v1/',
          service: 'api',
          bypass_auth: true,
          labels: LIMITED,
        },
        { name: 'chat', prefix: '/chat/', service: sockets.address, bypass_auth: true, allow_upgrade: ['websocket'] },
        {
          name: 'clustered',
          prefix: '/clustered/',
          service: up,
          bypass_auth: true,
          retry_policy: { retry_on: '5xx', num_retries: 1 },
          load_balancer: { policy: 'ring_hash', cookie: { name: 'sticky', ttl: '60s' } },
        },
        {
          name: 'guarded',
          prefix: '/guarded/',
          service: up,
          bypass_auth: true,
          circuit_breakers: [{ max_requests: 1 }],
        },
        {
          name: 'moved',
          prefix: '/moved/',
          service: 'example.org',
          host_redirect: true,
          path_redirect: '/new',
          bypass_auth: true,
        },
      ).replace(/^.*kind":"(AuthService|RateLimitService)".*\n---\n/gm, ''),
    );
    running = await startGatehouse({ configDir: config.dir });
    auth = createAuthService({
      usersFile: join(config.dir, 'users.htpasswd'),
      threads: 0,
      logger: running.gatehouse.logger,
    });
    authServer = http.createServer(auth.app.callback());
    await new Promise<void>((resolve) => authServer.listen(0, '127.0.0.1', resolve));

    const gw = running.url;
    const asked: [string, Promise<{ status: number; names: string[] }>][] = [
      ['an api answer', namesOf(gw, '/v1/messages/1')],
      ['a redirect', namesOf(gw, '/v1/messages')],
      ['a 405', namesOf(gw, '/v1/messages/1', 'POST')],
      ['a 404 of the gateway', namesOf(gw, '/nowhere')],
      ['a 400 of the gateway', namesOf(gw, '/v1/%2e%2e/%2e%2e/x')],
      ['a 401 of the auth service', namesOf(gw, '/v1/hotels')],
      ['a booking list', namesOf(gw, '/v1/hotels/bookings/', 'GET', { Authorization: ALICE })],
      [
        'a proxied answer',
        namesOf(gw, '/up/a', 'GET', { Origin: 'https://app.example', 'X-Gateway-Test-Allow': 'up' }),
      ],
      [
        'a proxied failure',
        namesOf(gw, '/up/fail', 'GET', { Origin: 'https://app.example', 'X-Gateway-Test-Allow': 'up-fail' }),
      ],
      ['an answer through a cluster', namesOf(gw, '/clustered/a')],
      ['a failure retried through a cluster', namesOf(gw, '/clustered/fail')],
      ['an Emissary redirect', namesOf(gw, '/moved/x')],
      [
        'a CORS preflight',
        namesOf(gw, '/up/a', 'OPTIONS', { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PUT' }),
      ],
      ['the diag page', namesOf(gw, '/gateway/v0/diag/', 'GET', { Authorization: ALICE })],
      ['the metrics', namesOf(gw, '/gateway/v0/metrics')],
      ['check_ready', namesOf(gw, '/gateway/v0/check_ready')],
      [
        'the auth service alone, refusing',
        namesOf(`http://127.0.0.1:${(authServer.address() as net.AddressInfo).port}`, '/x'),
      ],
      [
        'the auth service alone, admitting',
        namesOf(`http://127.0.0.1:${(authServer.address() as net.AddressInfo).port}`, '/x', 'GET', {
          Authorization: ALICE,
        }),
      ],
    ];
    for (const [what, answer] of asked) answers.set(what, await answer);
    // Three a minute: the fourth is refused, and a module's 404 keeps the rate-limit headers its error handler cleared.
    for (let i = 1; i <= 3; i++)
      answers.set(
        `a limited answer ${i}`,
        await namesOf(gw, '/limited/messages/1', 'GET', { 'X-Gateway-Test-Allow': 'spelling' }),
      );
    answers.set('a 429', await namesOf(gw, '/limited/messages/1', 'GET', { 'X-Gateway-Test-Allow': 'spelling' }));
    answers.set(
      'a module 404 under a limit',
      await namesOf(gw, '/limited/messages/999', 'GET', { 'X-Gateway-Test-Allow': 'spelling-404' }),
    );
    // One request in flight fills the breaker; the next is refused by it.
    const inFlight = once(upstream, 'held');
    const holding = namesOf(gw, '/guarded/hold');
    await inFlight;
    answers.set("a circuit breaker's 503", await namesOf(gw, '/guarded/b'));
    for (const res of held.splice(0)) res.end('late');
    answers.set('an answer the breaker let through', await holding);
    const port = Number(new URL(gw).port);
    answers.set('a tunnel 101', await rawHead(port, `GET /chat/x HTTP/1.1\r\nHost: gw\r\n${WEBSOCKET_HEADERS}\r\n`));
    answers.set('a request refused before the app', await rawHead(port, 'GET / HTTP/1.1\r\nConnection: close\r\n\r\n'));
  });

  after(async () => {
    await running?.stop();
    await auth?.close();
    await new Promise((resolve) => authServer?.close(resolve));
    await new Promise((resolve) => upstream?.close(resolve));
    await sockets?.close();
    config?.remove();
  });

  it('answered each request as the test meant', () => {
    const statuses = Object.fromEntries([...answers].map(([what, a]) => [what, a.status]));
    assert.deepEqual(statuses, {
      'an api answer': 200,
      'a redirect': 301,
      'a 405': 405,
      'a 404 of the gateway': 404,
      'a 400 of the gateway': 400,
      'a 401 of the auth service': 401,
      'a booking list': 200,
      'a proxied answer': 200,
      'a proxied failure': 503,
      'an answer through a cluster': 200,
      'a failure retried through a cluster': 503,
      'an Emissary redirect': 301,
      'a CORS preflight': 204,
      'the diag page': 200,
      'the metrics': 200,
      check_ready: 200,
      'the auth service alone, refusing': 401,
      'the auth service alone, admitting': 200,
      'a limited answer 1': 200,
      'a limited answer 2': 200,
      'a limited answer 3': 200,
      'a 429': 429,
      'a module 404 under a limit': 404,
      "a circuit breaker's 503": 503,
      'an answer the breaker let through': 200,
      'a tunnel 101': 101,
      'a request refused before the app': 400,
    });
  });

  it('writes every header in one spelling across all the answers', () => {
    const spellings = new Map<string, Set<string>>();
    for (const { names } of answers.values()) {
      for (const name of names)
        spellings.set(name.toLowerCase(), (spellings.get(name.toLowerCase()) ?? new Set()).add(name));
    }
    const mixed = [...spellings.values()].filter((s) => s.size > 1).map((s) => [...s].join(' / '));
    assert.deepEqual(mixed, []);
    // None left in the lower case the parsers hand over.
    assert.deepEqual(
      [...spellings.values()].flatMap((s) => [...s]).filter((name) => name === name.toLowerCase()),
      [],
    );
  });

  it("spells each as it is usually written, the upstream's and the config's names included", () => {
    const all = new Set([...answers.values()].flatMap((a) => a.names));
    for (const name of [
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'WWW-Authenticate',
      'X-Request-Id',
      'Content-Type',
      'ETag',
      'X-Upstream-Note',
      'X-Added-By',
      'Access-Control-Allow-Origin',
      'Access-Control-Expose-Headers',
      'Sec-WebSocket-Accept',
      'X-Travel-User',
      'Vary',
      'Location',
      'Allow',
      'X-Envoy-Overloaded',
      'Set-Cookie',
    ]) {
      assert.ok(all.has(name), `${name} in ${[...all].sort().join(', ')}`);
    }
    assert.deepEqual(
      answers
        .get('a module 404 under a limit')!
        .names.filter((n) => n.startsWith('RateLimit'))
        .sort(),
      ['RateLimit', 'RateLimit-Policy'],
    );
    assert.ok(answers.get("a circuit breaker's 503")!.names.includes('X-Envoy-Overloaded'));
    assert.ok(answers.get('an answer through a cluster')!.names.includes('Set-Cookie'));
    assert.ok(answers.get('an Emissary redirect')!.names.includes('Location'));
  });

  it('keeps a name someone spelt on purpose, and capitalises one the parsers lower-cased', () => {
    assert.equal(headerName('x-api-key'), 'X-Api-Key');
    assert.equal(headerName('X-API-Key'), 'X-API-Key');
    assert.equal(headerName('www-authenticate'), 'WWW-Authenticate');
    assert.equal(headerName('ratelimit-policy'), 'RateLimit-Policy');
  });
});
