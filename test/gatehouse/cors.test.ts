import assert from 'node:assert/strict';
import request from 'supertest';
import { ConfigError, createGateway, parseConfigFiles, type ConfigProblem } from '../../src/gateway';
import { createGatehouse } from '../../src/gatehouse';
import { createLogger } from '../../src/telemetry';
import { ALICE, basic } from '../support/credentials';
import { copyConfig, DEMO_CONFIG, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

const APP = 'https://app.example';
const PARTNER = 'https://partner.example';
const EVIL = 'https://evil.example';

/** The gateway-wide policy, and two Mappings of their own: one with a policy, one limited to PUT. */
const CORS_YAML = `apiVersion: gateway/v1
kind: Module
name: gateway
config:
  cors:
    origins: [${APP}]
    credentials: true
    headers: [Authorization, Content-Type, X-Gateway-Test-Allow]
    max_age: 600
---
apiVersion: gateway/v1
kind: Mapping
name: partner
prefix: /partner/
service: api
rewrite: /v2/
bypass_auth: true
cors:
  origins: ${PARTNER}
---
apiVersion: gateway/v1
kind: Mapping
name: put-only
prefix: /put-only/
service: api
rewrite: /v1/
method: PUT
`;

function preflight(url: string, path: string, origin: string, method = 'GET') {
  return request(url)
    .options(path)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', method)
    .set('Access-Control-Request-Headers', 'authorization');
}

describe('gatehouse CORS', function () {
  let config: TempConfig;
  let running: Running;

  before(async () => {
    config = copyConfig();
    config.write('cors.yaml', CORS_YAML);
    running = await startGatehouse({ configDir: config.dir });
  });

  after(async () => {
    await running?.stop();
    config?.remove();
  });

  it('answers a preflight on an auth-protected route without credentials: 204 and the policy', async () => {
    const res = await preflight(running.url, '/v1/hotels/bookings/', APP, 'POST').expect(204);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers['access-control-allow-headers'], 'Authorization,Content-Type,X-Gateway-Test-Allow');
    assert.equal(res.headers['access-control-max-age'], '600');
    assert.match(res.headers['access-control-allow-methods'], /POST/);
    assert.match(res.headers.vary, /Origin/);
    assert.equal(res.headers['www-authenticate'], undefined);
    const line = await running.log.requestLine(res.headers['x-request-id']);
    assert.deepEqual([line.method, line.route, line.status], ['OPTIONS', 'hotels-mapping', 204]);
  });

  it('lets the page read the answer, the rate-limit headers and a refusal', async () => {
    const ok = await request(running.url).get('/v1/hotels').set('Origin', APP).set('Authorization', ALICE).expect(200);
    assert.equal(ok.headers['access-control-allow-origin'], APP);
    assert.equal(ok.headers['access-control-expose-headers'], 'Link,Retry-After,RateLimit,RateLimit-Policy,Location');
    assert.match(ok.headers.ratelimit, /^"per-user";r=\d+;t=\d+$/);
    const refused = await request(running.url)
      .get('/v1/hotels')
      .set('Origin', APP)
      .set('Authorization', basic('alice', 'nope'))
      .expect(401);
    assert.equal(refused.headers['access-control-allow-origin'], APP);
    assert.equal(refused.body.code, 401);
  });

  it("keeps the CORS and rate-limit headers on a module's own error", async () => {
    const res = await request(running.url)
      .get('/v1/hotels/bookings/not-a-uuid')
      .set('Origin', APP)
      .set('Authorization', ALICE)
      .expect(404);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.match(res.headers.ratelimit, /^"per-user";/);
    assert.match(res.headers.vary, /Origin/);
    assert.match(res.headers.vary, /Accept/);
  });

  it('refuses the preflight of another origin and gives its requests no CORS headers', async () => {
    const res = await preflight(running.url, '/v1/hotels/', EVIL).expect(403);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.match(res.body.detail, /https:\/\/evil\.example is not allowed/);
    const simple = await request(running.url).get('/v1/messages/1').set('Origin', EVIL).expect(200);
    assert.equal(simple.headers['access-control-allow-origin'], undefined);
  });

  it("applies a Mapping's own policy instead of the gateway-wide one", async () => {
    const res = await preflight(running.url, '/partner/messages/', PARTNER).expect(204);
    assert.equal(res.headers['access-control-allow-origin'], PARTNER);
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    await preflight(running.url, '/partner/messages/', APP).expect(403);
    const list = await request(running.url).get('/partner/messages/').set('Origin', PARTNER).expect(200);
    assert.equal(list.headers['access-control-allow-origin'], PARTNER);
  });

  it('routes a preflight by the method it asks about, so a method-limited route answers it', async () => {
    const res = await preflight(running.url, '/put-only/messages/1', APP, 'PUT').expect(204);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal((await running.log.requestLine(res.headers['x-request-id'])).route, 'put-only');
  });

  it('makes the 404 of a path outside every route readable cross-origin', async () => {
    const res = await request(running.url).get('/nowhere').set('Origin', APP).expect(404);
    assert.equal(res.headers['access-control-allow-origin'], APP);
    assert.equal(res.body.code, 404);
    await preflight(running.url, '/nowhere', APP).expect(204);
  });

  it('swaps the policy on reload', async () => {
    const original = config.read('cors.yaml');
    try {
      config.write('cors.yaml', original.replace(`origins: [${APP}]`, `origins: [${APP}, ${EVIL}]`));
      assert.deepEqual(await running.gatehouse.reload(), { ok: true });
      await preflight(running.url, '/v1/hotels/', EVIL).expect(204);
    } finally {
      config.write('cors.yaml', original);
      assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    }
    await preflight(running.url, '/v1/hotels/', EVIL).expect(403);
  });
});

describe('gatehouse CORS off by default', function () {
  let running: Running;

  before(async () => {
    running = await startGatehouse({ configDir: DEMO_CONFIG });
  });

  after(() => running?.stop());

  it('treats a preflight as any OPTIONS request: behind auth, no CORS headers', async () => {
    const res = await preflight(running.url, '/v1/hotels/', APP).expect(401);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const simple = await request(running.url).get('/v1/messages/1').set('Origin', APP).expect(200);
    assert.equal(simple.headers['access-control-allow-origin'], undefined);
  });
});

describe('the Module record', () => {
  const file = 'config/cors.yaml';
  function problems(text: string): string[] {
    const result = parseConfigFiles([{ file, text }]);
    assert.equal(result.ok, false, 'the config should be refused');
    return (result as { problems: ConfigProblem[] }).problems.map((p) => p.text);
  }
  const module = (body: string, name = 'gateway') => `apiVersion: gateway/v1\nkind: Module\nname: ${name}\n${body}`;

  it('gives the configuration its CORS policy', () => {
    const result = parseConfigFiles([{ file, text: module('config:\n  cors:\n    origins: "*"\n') }]);
    assert.ok(result.ok);
    assert.deepEqual(result.config.module?.config.cors, { origins: '*', credentials: false });
  });

  it('may be left without config', () => {
    const result = parseConfigFiles([{ file, text: module('') }]);
    assert.ok(result.ok);
    assert.deepEqual(result.config.module?.config, {});
  });

  it('is one at most', () => {
    assert.deepEqual(problems(`${module('')}---\n${module('', 'second')}`), [
      `${file}: Module second: only one Module is allowed; 'gateway' (in ${file}) is the first`,
    ]);
  });

  it('reports a policy that cannot be applied with its field', () => {
    assert.deepEqual(
      problems(module('config:\n  cors:\n    origins: [https://ok.example, not-an-origin]\n    max_age: soon\n')),
      [
        `${file}: Module gateway: config.cors.origins: 'not-an-origin' is not an origin (scheme://host[:port]) or *`,
        `${file}: Module gateway: config.cors.max_age: 'soon' is not a number of seconds`,
      ],
    );
  });

  it('reports unknown and missing fields', () => {
    assert.deepEqual(problems(module('config:\n  cros: {}\n  cors:\n    credentials: true\n')), [
      `${file}: Module gateway: config.cors.origins: required (expected string or array)`,
      `${file}: Module gateway: config.cros: unknown field`,
    ]);
    assert.deepEqual(problems(module('config:\n  cors:\n    origins: 5\n')), [
      `${file}: Module gateway: config.cors.origins: expected string or array`,
    ]);
  });

  it("reports a Mapping's policy that cannot be applied", () => {
    const mapping = 'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /m/\nservice: api\ncors:\n  origins: []\n';
    assert.deepEqual(problems(mapping), [`${file}: Mapping m: cors.origins: at least one origin, or *, is needed`]);
  });

  it('keeps a Gatehouse from starting, and a gateway from being built, with a bad policy', async () => {
    const config = copyConfig();
    try {
      config.write('cors.yaml', module('config:\n  cors:\n    origins: ftp\n'));
      await assert.rejects(
        createGatehouse({
          configDir: config.dir,
          grpcPort: false,
          bookingStore: 'memory',
          logger: createLogger({ level: 'silent' }),
        }),
        (err: unknown) =>
          err instanceof ConfigError && /config\.cors\.origins: 'ftp' is not an origin/.test(err.message),
      );
    } finally {
      config.remove();
    }
    const config2 = {
      mappings: [],
      sources: [],
      module: {
        apiVersion: 'gateway/v1' as const,
        kind: 'Module' as const,
        name: 'g',
        config: { cors: { origins: 'x', credentials: false } },
      },
    };
    assert.throws(
      () => createGateway({ config: config2 }),
      /Module g: config\.cors: invalid CORS policy: origins: 'x' is not an origin/,
    );
  });

  it('refuses a reload with a bad policy and keeps the one before', async () => {
    const config = copyConfig();
    const running = await startGatehouse({ configDir: config.dir });
    try {
      config.write('cors.yaml', module(`config:\n  cors:\n    origins: ${APP}\n`));
      assert.deepEqual(await running.gatehouse.reload(), { ok: true });
      config.write('cors.yaml', module('config:\n  cors:\n    origins: nope\n'));
      const outcome = await running.gatehouse.reload();
      assert.equal(outcome.ok, false);
      assert.match(
        String(!outcome.ok && outcome.problems.join('\n')),
        /config\.cors\.origins: 'nope' is not an origin/,
      );
      const res = await preflight(running.url, '/v1/hotels/', APP).expect(204);
      assert.equal(res.headers['access-control-allow-origin'], APP);
    } finally {
      await running.stop();
      config.remove();
    }
  });
});
