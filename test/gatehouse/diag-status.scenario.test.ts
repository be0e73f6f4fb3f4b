/**
 * A running Gatehouse's diag page says how its dependencies are, draws its
 * traffic per route, and lists its folder's files: on real Redis and
 * PGlite, through the gateway.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { freePort } from '../support/ports';
import { startRedis, type RedisProcess } from '../support/redis';
import { freshDataDir } from '../support/pglite';
import { ALICE } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { eventually } from '../support/polling';
import { startGatehouse, type Running } from '../support/gatehouse';

interface Dependency {
  name: string;
  state: string;
  detail: string;
}

describe('gatehouse diag: dependencies, traffic and files', function () {
  let redis: RedisProcess;
  let config: TempConfig;
  let running: Running;

  before(async () => {
    redis = await startRedis();
    config = copyConfig();
    const dead = await freePort();
    config.write(
      'quotes.yaml',
      `apiVersion: gateway/v1\nkind: Mapping\nname: quotes\nprefix: /quotes/\nservice: 127.0.0.1:${dead}\nbypass_auth: true\n`,
    );
    config.write('README.txt', 'notes\n');
    running = await startGatehouse({ configDir: config.dir, redisUrl: redis.url, dataDir: await freshDataDir() });
  });

  after(async () => {
    await running?.stop();
    await redis?.stop();
    config?.remove();
  });

  const diag = async () =>
    (await request(running.url).get('/gateway/v0/diag/?json=true').set('Authorization', ALICE).expect(200)).body;
  const dependency = async (name: string): Promise<Dependency> =>
    ((await diag()).dependencies as Dependency[]).find((d) => d.name === name)!;

  it('says how Redis, the database, the services and the upstream clusters are', async () => {
    const dependencies = ((await diag()).dependencies as Dependency[]).map((d) => [d.name, d.state, d.detail]);
    assert.deepEqual(dependencies[0], ['Redis', 'ok', `${redis.url}: answers`]);
    assert.equal(dependencies[1][0], 'Database');
    assert.equal(dependencies[1][1], 'ok');
    assert.match(dependencies[1][2], /^PGlite in .+: answers$/);
    assert.deepEqual(dependencies.slice(2), [
      ['Rate-limit service', 'ok', 'built-in: 2 limits in 1 domain, counters in Redis'],
      ['Auth service', 'ok', 'built-in: 2 users'],
      ['Upstream clusters', 'ok', '1 cluster, no endpoint ejected'],
    ]);
  });

  it('counts the traffic of each route minute by minute, the health probes and metrics scrapes apart', async () => {
    const http = request(running.url);
    for (let i = 0; i < 3; i++) await http.get('/v1/hotels').set('Authorization', ALICE).expect(200);
    for (let i = 0; i < 2; i++) await http.get('/quotes/x').expect(503);
    for (let i = 0; i < 5; i++) await http.get('/gateway/v0/check_ready').expect(200);
    await http.get('/gateway/v0/metrics').expect(200);
    const { traffic } = await diag();
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const byName = new Map<string, { requests: number[]; errors: number[] }>(
      traffic.routes.map((r: { name: string }) => [r.name, r]),
    );
    assert.equal(sum(byName.get('hotels-mapping')!.requests), 3);
    assert.equal(sum(byName.get('quotes')!.errors), 2);
    assert.ok(!byName.has('gateway-health') && !byName.has('gateway-metrics'), [...byName.keys()].join(', '));
    // Every route drawn makes up the whole: the probes are in neither.
    const routes = traffic.routes.reduce((n: number, r: { requests: number[] }) => n + sum(r.requests), 0);
    assert.equal(sum(traffic.total.requests), routes);
    assert.equal(traffic.total.requests.length, traffic.minutes);
  });

  it('lists every entry of the folder as the serving configuration read it, again after a reload, with its warnings', async () => {
    const files = async () =>
      new Map(
        ((await diag()).config.files as { name: string; readAs: string; detail: string }[]).map((f) => [f.name, f]),
      );
    assert.equal((await diag()).config.warnings, undefined, 'no warning while each file is read as its name says');
    assert.deepEqual(
      running.log.lines.filter((l) => l.msg === 'config warning'),
      [],
    );
    const before = await files();
    assert.deepEqual(before.get('README.txt'), {
      name: 'README.txt',
      readAs: 'ignored',
      detail: 'not read: neither YAML (*.yaml, *.yml) nor users.htpasswd',
    });
    assert.equal(before.get('quotes.yaml')?.detail, '1 Mapping');
    config.write('limits.yaml', 'domain: mongo_cps\ndescriptors:\n  - key: database\n');
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    assert.deepEqual((await files()).get('limits.yaml'), {
      name: 'limits.yaml',
      readAs: 'records',
      detail: 'no record; ignored: document 1 (domain mongo_cps)',
    });
    assert.equal((await diag()).config.counts.mappings, 6);
    // Said as `gatehouse check` says it: in the JSON, on the page under the files, and in the log.
    const warning = `${config.dir}/limits.yaml: document 1 (domain mongo_cps) looks like rate limits in envoyproxy/ratelimit's format (domain, descriptors), but limits.yaml is read as records and the document is ignored: limits are read from ratelimit.yaml and ratelimit/*.yaml only`;
    assert.deepEqual((await diag()).config.warnings, [warning]);
    const page = await request(running.url).get('/gateway/v0/diag/').set('Authorization', ALICE).expect(200);
    assert.ok(
      page.text.includes(`<li><span class="warn">warning:</span> ${warning.replace(/'/g, '&#39;')}</li>`),
      'the page shows the warning under the files',
    );
    const logged = running.log.lines.filter((l) => l.msg === 'config warning').map((l) => l.warning);
    assert.deepEqual(logged, [warning]);
  });

  it('logs the warnings of the folder it starts on', async () => {
    const other = copyConfig();
    other.write('ratelimit-config.yaml', 'domain: mongo_cps\ndescriptors:\n  - key: database\n');
    try {
      const started = await startGatehouse({ configDir: other.dir, dataDir: await freshDataDir() });
      try {
        assert.deepEqual(
          started.log.lines.filter((l) => l.msg === 'config warning').map((l) => l.warning),
          [
            `${other.dir}/ratelimit-config.yaml: document 1 (domain mongo_cps) looks like rate limits in envoyproxy/ratelimit's format (domain, descriptors), but ratelimit-config.yaml is read as records and the document is ignored: limits are read from ratelimit.yaml and ratelimit/*.yaml only`,
          ],
        );
      } finally {
        await started.stop();
      }
    } finally {
      other.remove();
    }
  });

  it('says Redis is down, and why, once it is', async () => {
    await redis.kill();
    const down = await eventually(async () => {
      const redisRow = await dependency('Redis');
      return redisRow.state === 'down' ? redisRow : undefined;
    }, 'diag to say Redis is down');
    assert.match(down.detail, new RegExp(`^${redis.url}: Redis is not connected: `));
    const page = await request(running.url).get('/gateway/v0/diag/').set('Authorization', ALICE).expect(200);
    assert.match(page.text, /<th scope="row">Redis<\/th><td><span class="state down">down<\/span><\/td>/);
  });
});
