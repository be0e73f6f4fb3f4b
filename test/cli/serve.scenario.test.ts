import assert from 'node:assert/strict';
import { eventually } from '../support/polling';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import request from 'supertest';
import { stringify } from 'yaml';
import { createGatehouse, type Gatehouse } from '../../src/gatehouse';
import { rateLimitProtos } from '../../src/ratelimit/grpc/protos';
import { createLogger } from '../../src/telemetry';
import { installWithoutProtos, killAll, REPO_ROOT, runCli, startCli, type CliServer } from '../support/process';
import { startRedis, type RedisProcess } from '../support/redis';
import { freshDataDir } from '../support/pglite';
import { SAME_STOP_MS } from '../../src/cli/signals';
import { setTimeout as sleep } from 'node:timers/promises';
import { ALICE, basic } from '../support/credentials';
import { decided } from '../support/client';

const BOB = basic('bob', 'builder');
const WRONG = basic('alice', 'builder');
/** Alice's confirmed hotel booking in config/bookings.yaml. */
const ALICE_BOOKING = 'b0db9db1-e959-46d6-b29b-0696485cc76a';
const QUIET = { LOG_LEVEL: 'warn' };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

/** A plain grpc-js client of the envoy v3 service, built from the protos as any client would. */
function rateLimitClient(address: string): grpc.Client & Record<string, Any> {
  const pkg = grpc.loadPackageDefinition(rateLimitProtos()) as Any;
  return new pkg.envoy.service.ratelimit.v3.RateLimitService(address, grpc.credentials.createInsecure());
}

function shouldRateLimit(client: Any, body: object): Promise<Any> {
  return new Promise((resolve, reject) =>
    client.ShouldRateLimit(body, { deadline: Date.now() + 600_000 }, (err: Error | null, res: Any) =>
      err ? reject(err) : resolve(res),
    ),
  );
}

/** A config folder holding only `records`, as top-level documents of services.yaml. */
function configFolder(records: object[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-split-'));
  writeFileSync(join(dir, 'services.yaml'), records.map((r) => stringify(r)).join('---\n'));
  return dir;
}

describe('gatehouse serve', function () {
  // Two minutes: a start opens its bookings database before it listens, and a loaded machine is slow at it.

  after(killAll);

  it('refuses an unknown module with exit 2, listing the modules', async () => {
    const res = await runCli(['serve', 'weather', '--port', '0']);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /unknown module 'weather'; modules: api, auth, hotel-booking, car-booking, ratelimit/);
  });

  it('refuses --redis for a module other than ratelimit with exit 2, instead of ignoring it', async () => {
    const res = await runCli(['serve', 'auth', '--port', '0', '--redis', 'redis://127.0.0.1:6379']);
    assert.equal(res.code, 2);
    assert.equal(res.stdout, '');
    assert.equal(
      res.stderr,
      "gatehouse: --redis is for ratelimit only: auth keeps no counters\nRun 'gatehouse serve --help' for usage.\n",
    );
  });

  it('refuses a missing module name with exit 2', async () => {
    const res = await runCli(['serve']);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /serve takes one module/);
  });

  it('ends with exit 1 when its port is taken, with one line naming the address', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      for (const module of ['auth', 'ratelimit']) {
        const res = await runCli(['serve', module, '--port', String(port)], { env: QUIET });
        assert.equal(res.code, 1, `${module}: ${res.stderr}`);
        // Only that line: grpc-js's own 'E No address added...' goes to the log.
        const what = module === 'ratelimit' ? 'gRPC' : 'HTTP';
        assert.equal(
          res.stderr,
          `gatehouse: cannot listen for ${what} on 127.0.0.1:${port}: the address is already in use (another process listens on that port)\n`,
        );
      }
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('refuses a malformed PORT or GRPC_PORT with exit 1 naming the variable, instead of listening elsewhere', async () => {
    const [api, ratelimit, hex] = await Promise.all([
      runCli(['serve', 'api'], { env: { ...QUIET, PORT: 'abc' } }),
      runCli(['serve', 'ratelimit'], { env: { ...QUIET, GRPC_PORT: '99999' } }),
      runCli(['serve', 'api'], { env: { ...QUIET, PORT: '0x1F90' } }),
    ]);
    assert.equal(api.code, 1, api.stdout);
    assert.equal(api.stderr, 'gatehouse: PORT: must be an integer from 0 to 65535 (got "abc")\n');
    assert.equal(ratelimit.code, 1, ratelimit.stdout);
    assert.equal(
      ratelimit.stderr,
      'gatehouse: GRPC_PORT: must be an integer from 0 to 65535, or false for none (got "99999")\n',
    );
    assert.equal(hex.code, 1, hex.stdout);
    assert.match(hex.stderr, /PORT: must be an integer from 0 to 65535 \(got "0x1F90"\)/);
  });

  it('ends with exit 1 for an unknown LOG_LEVEL whichever the module, instead of serving on with no way to stop', async () => {
    const results = await Promise.all(
      ['api', 'auth', 'hotel-booking', 'car-booking', 'ratelimit'].map((module) =>
        runCli(['serve', module, '--port', '0'], { env: { LOG_LEVEL: 'loud' } }),
      ),
    );
    for (const res of results) {
      assert.equal(res.code, 1, res.stdout);
      assert.equal(res.stdout, '');
      assert.equal(
        res.stderr,
        'gatehouse: LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal, silent (got "loud")\n',
      );
    }
  });

  it('ends with exit 1 for bad limits even with a Redis URL, instead of reconnecting forever', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-serve-'));
    try {
      writeFileSync(
        join(dir, 'ratelimit.yaml'),
        'domain: gateway\ndescriptors:\n  - key: user\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n',
      );
      const res = await runCli(
        ['serve', 'ratelimit', '--port', '0', '--config', dir, '--redis', 'redis://127.0.0.1:1'],
        { env: QUIET },
      );
      assert.equal(res.code, 1);
      assert.match(res.stderr, /ratelimit\.yaml: descriptors\[0\]\.rate_limit\.unit: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends with exit 1 on a config folder that is not there, instead of serving without its files', async () => {
    const missing = join(tmpdir(), 'gatehouse-no-such-folder');
    for (const module of ['ratelimit', 'hotel-booking', 'car-booking']) {
      const res = await runCli(['serve', module, '--port', '0', '--config', missing], { env: QUIET });
      assert.equal(res.code, 1, `${module}: ${res.stdout}${res.stderr}`);
      assert.equal(res.stdout, '', `${module} said it listens`);
      assert.equal(res.stderr, `gatehouse: ${missing}: cannot read the config folder: no such folder\n`);
    }
  });

  describe('api', () => {
    let api: CliServer;
    before(async () => {
      api = await startCli(['serve', 'api', '--port', '0'], { env: QUIET });
    });
    after(() => api.stop());

    it('announces its address alone: it reads no file', () => {
      assert.equal(api.line, `api listening on http://127.0.0.1:${api.port}`);
    });

    it('answers /v1/messages/1 with the message and its absolute url', async () => {
      assert.equal(api.name, 'api');
      assert.match(api.address, /^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${api.address}/v1/messages/1`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { id: string; url: string };
      assert.equal(body.id, '1');
      assert.equal(body.url, `${api.address}/v1/messages/1`);
    });

    it('builds urls from the X-Forwarded headers of the gateway in front of it', async () => {
      const res = await fetch(`${api.address}/v2/messages/1`, {
        headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example' },
      });
      assert.equal(((await res.json()) as { url: string }).url, 'https://api.example/v2/messages/1');
    });

    it('stops with exit 0 on SIGTERM', async () => {
      const other = await startCli(['serve', 'api', '--port', '0'], { env: QUIET });
      const ended = await other.stop();
      assert.equal(ended.code, 0, JSON.stringify(ended));
      await assert.rejects(fetch(`${other.address}/v1/messages/1`));
    });

    it('logs one access line a request, the refused ones too, and says so when it stops', async () => {
      const other = await startCli(['serve', 'api', '--port', '0'], {
        env: { LOG_LEVEL: 'info', DRAIN_DELAY_MS: '0' },
      });
      const ok = await fetch(`${other.address}/v1/messages/?limit=1&token=secret`, {
        headers: { 'x-request-id': 'serve-log-1' },
      });
      assert.equal(ok.headers.get('x-request-id'), 'serve-log-1');
      assert.equal((await fetch(`${other.address}/nope`)).status, 404);
      const ended = await other.stop();
      assert.equal(ended.code, 0, JSON.stringify(ended));
      const lines = ended.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const access = lines.filter((line) => line.status !== undefined);
      assert.deepEqual(
        access.map(({ method, path, route, status, req_id }) => ({ method, path, route, status, req_id })),
        [
          { method: 'GET', path: '/v1/messages/', route: 'api', status: 400, req_id: 'serve-log-1' },
          { method: 'GET', path: '/nope', route: 'api', status: 404, req_id: access[1]?.req_id },
        ],
      );
      assert.match(String(access[1].req_id), /^[0-9a-f-]{36}$/);
      assert.ok(!ended.stdout.includes('secret'), 'no query value is logged');
      assert.ok(lines.some((line) => line.msg === 'shutting down'));
      assert.ok(lines.some((line) => line.msg === 'api stopped'));
    });

    it('lives on through SIGHUP, which it answers with a line: the api reads no file', async () => {
      const other = await startCli(['serve', 'api', '--port', '0'], {
        env: { LOG_LEVEL: 'info', DRAIN_DELAY_MS: '0' },
      });
      other.child.kill('SIGHUP');
      await eventually(
        async () => (other.output().stdout.includes('nothing to reload') ? true : undefined),
        'the reload line',
      );
      assert.equal((await fetch(`${other.address}/v1/messages/1`)).status, 200);
      const ended = await other.stop();
      assert.equal(ended.code, 0, JSON.stringify(ended));
    });
  });

  describe('ratelimit', () => {
    let server: CliServer;
    let client: Any;
    before(async () => {
      server = await startCli(['serve', 'ratelimit', '--port', '0'], { env: QUIET });
      client = rateLimitClient(server.address);
    });
    after(async () => {
      client?.close();
      await server?.stop();
    });

    it('announces a gRPC address and the folder its limits come from', () => {
      assert.equal(server.name, 'ratelimit');
      assert.equal(
        server.line,
        `ratelimit listening on 127.0.0.1:${server.port} (gRPC; config folder ${join(REPO_ROOT, 'config')})`,
      );
    });

    it('answers ShouldRateLimit with the demo limits of config/ratelimit.yaml', async () => {
      const ask = {
        domain: 'gateway',
        descriptors: [{ entries: [{ key: 'x-gateway-test-allow', value: 'grpc-direct' }] }],
      };
      const first = await shouldRateLimit(client, ask);
      assert.equal(first.overall_code, 'OK');
      assert.equal(first.statuses[0].current_limit.requests_per_unit, 3);
      assert.equal(first.statuses[0].current_limit.unit, 'MINUTE');
      assert.equal(first.statuses[0].limit_remaining, 2);
      await shouldRateLimit(client, ask);
      await shouldRateLimit(client, ask);
      const over = await shouldRateLimit(client, ask);
      assert.equal(over.overall_code, 'OVER_LIMIT');
      assert.equal(over.statuses[0].limit_remaining, 0);
    });

    it('answers OK for a domain it has no limits for', async () => {
      const res = await shouldRateLimit(client, {
        domain: 'elsewhere',
        descriptors: [{ entries: [{ key: 'user', value: 'x' }] }],
      });
      assert.equal(res.overall_code, 'OK');
    });
  });

  describe('ratelimit with Redis', () => {
    it('logs losing Redis and getting it back once each, as gatehouse start does, and counts again once it is back', async () => {
      let redis: RedisProcess = await startRedis();
      const server = await startCli(['serve', 'ratelimit', '--port', '0', '--redis', redis.url], {
        env: { LOG_LEVEL: 'info' },
      });
      const client = rateLimitClient(server.address);
      // The start line says where the counters are, as gatehouse start's does.
      assert.ok(server.line.endsWith(`; counters: Redis at ${redis.url})`), server.line);
      const said = (msg: string) =>
        server
          .output()
          .stdout.split('\n')
          .filter((line) => line.includes(`"msg":"${msg}"`)).length;
      const ask = {
        domain: 'gateway',
        descriptors: [{ entries: [{ key: 'x-gateway-test-allow', value: `redis-${Date.now()}` }] }],
      };
      try {
        // Listening before its Redis connection is up: calls fail until it is.
        await eventually(
          async () => (await shouldRateLimit(client, ask).catch(() => undefined))?.overall_code === 'OK' || undefined,
          'Redis to be connected',
        );
        const port = redis.port;
        await redis.kill();
        await eventually(
          async () =>
            said('Redis is unreachable: rate-limit decisions follow the failure mode until it is back') === 1 ||
            undefined,
          'the outage to be logged',
        );
        await assert.rejects(shouldRateLimit(client, ask));
        await redis.stop();
        redis = await startRedis({ port });
        await eventually(async () => said('Redis is connected again') === 1 || undefined, 'the return to be logged');
        assert.equal(
          (await shouldRateLimit(client, ask)).statuses[0].limit_remaining,
          2,
          'a fresh Redis counts from the start',
        );
        assert.equal(
          said('Redis is unreachable: rate-limit decisions follow the failure mode until it is back'),
          1,
          'the outage is told once',
        );
      } finally {
        client.close();
        await server.stop();
        await redis.stop();
      }
    });
  });

  describe('a start that fails', () => {
    it('ends with exit 1 once its Redis client is open, instead of reconnecting forever (an install without its protos)', async () => {
      const install = await installWithoutProtos();
      try {
        // Nothing listens there: a client left open would try again and again, and keep the process.
        const res = await runCli(['serve', 'ratelimit', '--port', '0', '--redis', 'redis://127.0.0.1:1'], {
          env: { LOG_LEVEL: 'silent' },
          main: install.main,
        });
        assert.equal(res.code, 1, res.stderr);
        assert.match(res.stderr, /^gatehouse: .*ratelimit\.proto/m);
      } finally {
        install.remove();
      }
    });
  });

  describe('stopping after a drain, as gatehouse start does', () => {
    const DRAINING = { LOG_LEVEL: 'info', DRAIN_DELAY_MS: '600000' };
    const draining = (server: CliServer) =>
      new Promise<void>((resolve) => {
        const look = () => (server.output().stdout.includes('"msg":"draining:') ? resolve() : setTimeout(look, 20));
        look();
      });
    // A second signal a second or more after the first (counted from when the module said it) ends it at once;
    // one sooner is the same stop, which drains for the whole delay.
    const stopAgain = async (server: CliServer) => {
      await sleep(SAME_STOP_MS + 200);
      return (await server.stop()).code;
    };

    it('keeps an HTTP module answering, each answer closing its connection, not ready, until the port closes', async () => {
      const api = await startCli(['serve', 'api', '--port', '0'], { env: DRAINING });
      const ready = await fetch(`${api.address}/gateway/v0/check_ready`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', module: 'api' });
      api.child.kill('SIGTERM');
      await draining(api);
      const res = await fetch(`${api.address}/v1/messages/1`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('connection'), 'close');
      await res.text();
      const notReady = await fetch(`${api.address}/gateway/v0/check_ready`);
      assert.equal(notReady.status, 503);
      assert.equal(((await notReady.json()) as { detail: string }).detail, 'not ready: the module is shutting down');
      const alive = await fetch(`${api.address}/gateway/v0/check_alive`);
      assert.deepEqual([alive.status, await alive.json()], [200, { status: 'alive' }]);
      assert.equal(await stopAgain(api), 1, 'a second signal ends it at once');
    });

    it('keeps the rate-limit service answering while its health says NOT_SERVING', async () => {
      const server = await startCli(['serve', 'ratelimit', '--port', '0'], { env: DRAINING });
      const client = rateLimitClient(server.address);
      const pkg = grpc.loadPackageDefinition(rateLimitProtos()) as Any;
      const health = new pkg.grpc.health.v1.Health(server.address, grpc.credentials.createInsecure());
      try {
        server.child.kill('SIGTERM');
        await draining(server);
        const status = await new Promise((resolve, reject) =>
          health.Check({ service: '' }, (err: Error | null, res: Any) => (err ? reject(err) : resolve(res))),
        );
        assert.deepEqual(status, { status: 'NOT_SERVING' });
        assert.equal((await shouldRateLimit(client, { domain: 'gateway' })).overall_code, 'OK');
        assert.equal(await stopAgain(server), 1, 'a second signal ends it at once');
      } finally {
        client.close();
        health.close();
        // Still draining only when an assertion failed first.
        server.child.kill('SIGKILL');
        await server.stop();
      }
    });

    it('takes the rate-limit bounds for ratelimit only', async () => {
      const res = await runCli(['serve', 'api', '--port', '0', '--max-descriptor-entries', '8'], { env: QUIET });
      assert.equal(res.code, 2);
      assert.match(res.stderr, /^gatehouse: --max-descriptor-entries is for ratelimit only: api serves HTTP\n/);
      const bad = await runCli(['serve', 'ratelimit', '--port', '0', '--grpc-max-message-bytes', '0'], { env: QUIET });
      assert.equal(bad.code, 2);
      assert.match(
        bad.stderr,
        /^gatehouse: --grpc-max-message-bytes: must be an integer of 1 or more \(bytes\) \(got "0"\)\n/,
      );
      for (const flag of ['--grpc-max-connections', '--grpc-request-timeout-ms']) {
        const refused = await runCli(['serve', 'auth', '--port', '0', flag, '10'], { env: QUIET });
        assert.match(refused.stderr, new RegExp(`^gatehouse: ${flag} is for ratelimit only: auth serves HTTP\\n`));
        const zero = await runCli(['serve', 'ratelimit', '--port', '0', flag, '0'], { env: QUIET });
        assert.match(
          zero.stderr,
          new RegExp(`^gatehouse: ${flag}: must be an integer of 1 or more[^\\n]* \\(got "0"\\)\\n`),
        );
      }
    });
  });

  describe('the monolith split: a gateway in front of auth, hotel-booking and ratelimit processes', () => {
    let auth: CliServer;
    let hotels: CliServer;
    let limits: CliServer;
    let gatehouse: Gatehouse;
    let dir: string;
    let data: string;
    const booking = (id: string) => `/v1/hotels/bookings/${id}`;

    before(async () => {
      data = await freshDataDir();
      [auth, hotels, limits] = await Promise.all([
        startCli(['serve', 'auth', '--port', '0'], { env: QUIET }),
        startCli(['serve', 'hotel-booking', '--port', '0'], { env: { ...QUIET, GATEHOUSE_DATA: data } }),
        startCli(['serve', 'ratelimit', '--port', '0'], { env: QUIET }),
      ]);
      // The gateway's folder holds no users, bookings or limits: whatever it answers comes from the processes.
      dir = configFolder([
        {
          apiVersion: 'gateway/v1',
          kind: 'AuthService',
          name: 'remote-auth',
          auth_service: `127.0.0.1:${auth.port}`,
          proto: 'http',
          allowed_authorization_headers: ['x-travel-user'],
          // As the limits' below: the remote service's word is what is tested, however long its bcrypt checks take.
          timeout_ms: 600_000,
        },
        // The default 20 ms is a production budget; here the remote service's word is what is tested, however busy the machine.
        {
          apiVersion: 'gateway/v1',
          kind: 'RateLimitService',
          name: 'remote-limits',
          service: `127.0.0.1:${limits.port}`,
          domain: 'gateway',
          timeout_ms: 600_000,
        },
        {
          apiVersion: 'gateway/v1',
          kind: 'Mapping',
          name: 'hotels',
          prefix: '/v1/hotels',
          rewrite: '',
          service: `127.0.0.1:${hotels.port}`,
          // As the services' above: the remote booking service's answer is what is tested, however long it takes.
          timeout_ms: 0,
          labels: {
            gateway: [
              {
                request_label_group: [
                  { 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } },
                ],
              },
            ],
          },
        },
      ]);
      gatehouse = await createGatehouse({
        configDir: dir,
        grpcPort: false,
        watch: false,
        bookingStore: 'memory',
        logger: createLogger({ level: 'silent' }),
      });
    });
    after(async () => {
      await gatehouse?.stop();
      await Promise.all([auth, hotels, limits].map((p) => p?.stop()));
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const gateway = () => request(gatehouse.app.callback());

    it('announces where each process listens, the folder it reads its files from, and where it keeps bookings', () => {
      const folder = join(REPO_ROOT, 'config');
      assert.equal(auth.line, `auth listening on http://127.0.0.1:${auth.port} (config folder ${folder})`);
      assert.equal(
        hotels.line,
        `hotel-booking listening on http://127.0.0.1:${hotels.port} (config folder ${folder}; bookings: PGlite in ${data})`,
      );
    });

    it('routes the hotels to the remote booking service', () => {
      const route = gatehouse.gateway.snapshot().routes.find((r) => r.name === 'hotels');
      assert.equal(route?.target, 'remote');
    });

    it("answers alice's booking to alice, through the remote auth and booking services", async () => {
      const res = await decided(() => gateway().get(booking(ALICE_BOOKING)).set('Authorization', ALICE));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.id, ALICE_BOOKING);
      assert.equal(res.body.hotel_id, 'b1240207-0df8-456d-9ee3-752904b6062b');
      assert.equal(res.body.status, 'confirmed');
    });

    it('answers 401 with the challenge of the remote auth service without credentials', async () => {
      const res = await gateway().get(booking(ALICE_BOOKING));
      assert.equal(res.status, 401);
      assert.match(res.headers['www-authenticate'], /^Basic realm=/);
      assert.equal(res.body.code, 401);
    });

    it('answers 401 for a wrong password, and 404 to bob for a booking of alice', async () => {
      const wrong = await decided(() => gateway().get(booking(ALICE_BOOKING)).set('Authorization', WRONG));
      assert.equal(wrong.status, 401);
      assert.equal((await decided(() => gateway().get(booking(ALICE_BOOKING)).set('Authorization', BOB))).status, 404);
    });

    it('lets no client claim to be alice with X-Travel-User', async () => {
      const res = await decided(() =>
        gateway().get(booking(ALICE_BOOKING)).set('Authorization', BOB).set('X-Travel-User', 'alice'),
      );
      assert.equal(res.status, 404);
    });

    it('applies the limits of the remote rate-limit service: 429 after 3 a minute for one X-Gateway-Test-Allow', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await gateway().get('/v1/hotels/').set('Authorization', ALICE).set('X-Gateway-Test-Allow', 'split');
        statuses.push(res.status);
        if (res.status === 429) {
          assert.ok(Number(res.headers['retry-after']) > 0, 'Retry-After');
          assert.equal(res.body.code, 429);
        }
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      // Another value of the header has a count of its own.
      assert.equal(
        (await gateway().get('/v1/hotels/').set('Authorization', ALICE).set('X-Gateway-Test-Allow', 'other')).status,
        200,
      );
    });
  });
});
