import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { freePort } from '../support/ports';
import { ALICE, basic } from '../support/credentials';
import { copyConfig, type TempConfig } from '../support/config-folder';
import { startGatehouse, type Running } from '../support/gatehouse';

/** The value of one sample of the exposition, or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('gatehouse metrics of decisions', function () {
  let config: TempConfig;
  let running: Running;
  let hanging: Server;
  let metricsText: string;

  before(async () => {
    // An upstream that never answers, and a port where nothing listens.
    hanging = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const slowPort = (hanging.address() as AddressInfo).port;
    const deadPort = await freePort();
    config = copyConfig();
    config.write(
      'upstreams.yaml',
      [
        { name: 'dead-upstream', prefix: '/dead/', service: `127.0.0.1:${deadPort}`, timeout_ms: 2000 },
        { name: 'slow-upstream', prefix: '/slow/', service: `127.0.0.1:${slowPort}`, timeout_ms: 100 },
        {
          name: 'retry-upstream',
          prefix: '/retry/',
          service: `127.0.0.1:${deadPort}`,
          timeout_ms: 2000,
          extra: 'retry_policy: {retry_on: connect-failure}\n',
        },
        {
          name: 'no-retry-upstream',
          prefix: '/no-retry/',
          service: `127.0.0.1:${deadPort}`,
          timeout_ms: 2000,
          extra: 'retry_policy: {retry_on: connect-failure}\ncircuit_breakers: [{max_retries: 0}]\n',
        },
        {
          name: 'pair-upstream',
          prefix: '/pair/',
          service: `127.0.0.1:${deadPort}`,
          timeout_ms: 2000,
          extra: `endpoints: ["127.0.0.1:${deadPort}", "127.0.0.2:${deadPort}"]\n`,
        },
      ]
        .map(
          (m) =>
            `apiVersion: gateway/v1\nkind: Mapping\nname: ${m.name}\nprefix: ${m.prefix}\nservice: "${m.service}"\ntimeout_ms: ${m.timeout_ms}\nbypass_auth: true\n${m.extra ?? ''}`,
        )
        .join('---\n'),
    );
    running = await startGatehouse({ configDir: config.dir });
    const http = request(running.url);

    await http.get('/v1/hotels').set('Authorization', ALICE).expect(200);
    await http.get('/v1/hotels').set('Authorization', basic('alice', 'wrong')).expect(401);
    await http.get('/v1/messages/1').expect(200);
    // Three a minute for one value of X-Gateway-Test-Allow: the fourth is refused.
    for (let i = 0; i < 3; i++)
      await http.get('/v1/hotels').set('Authorization', ALICE).set('X-Gateway-Test-Allow', 'metrics').expect(200);
    await http.get('/v1/hotels').set('Authorization', ALICE).set('X-Gateway-Test-Allow', 'metrics').expect(429);
    await http.get('/dead/x').expect(503);
    await http.get('/slow/x').expect(504);
    await http.get('/retry/x').expect(503);
    await http.get('/no-retry/x').expect(503);
    // Either endpoint refuses: the first to fail 5 times in a row is ejected.
    for (let i = 0; i < 10; i++) await http.get('/pair/x').expect(503);
    await http.get('/nowhere').expect(404);
    assert.deepEqual(await running.gatehouse.reload(), { ok: true });
    config.write('users.htpasswd', 'carol:plaintext\n');
    assert.equal((await running.gatehouse.reload()).ok, false);
    metricsText = (await http.get('/gateway/v0/metrics').expect(200)).text;
  });

  after(async () => {
    await running?.stop();
    hanging?.closeAllConnections();
    await new Promise((resolve) => hanging?.close(resolve));
    config?.remove();
  });

  it('counts requests by mapping name, method and status', () => {
    assert.equal(
      sample(
        metricsText,
        'gatehouse_http_requests_total{route="hotels-mapping",method="GET",status="200",protocol="HTTP/1.1"}',
      ),
      4,
    );
    assert.equal(
      sample(
        metricsText,
        'gatehouse_http_requests_total{route="hotels-mapping",method="GET",status="401",protocol="HTTP/1.1"}',
      ),
      1,
    );
    assert.equal(
      sample(
        metricsText,
        'gatehouse_http_requests_total{route="hotels-mapping",method="GET",status="429",protocol="HTTP/1.1"}',
      ),
      1,
    );
    assert.equal(
      sample(
        metricsText,
        'gatehouse_http_requests_total{route="api-v1",method="GET",status="200",protocol="HTTP/1.1"}',
      ),
      1,
    );
    assert.equal(
      sample(
        metricsText,
        'gatehouse_http_requests_total{route="unmatched",method="GET",status="404",protocol="HTTP/1.1"}',
      ),
      1,
    );
  });

  it('counts the verdicts of the auth stage', () => {
    assert.equal(sample(metricsText, 'gatehouse_auth_decisions_total{result="allowed"}'), 5);
    assert.equal(sample(metricsText, 'gatehouse_auth_decisions_total{result="denied"}'), 1);
    // /v1/messages/1 and the 14 requests to upstream routes bypass auth.
    assert.equal(sample(metricsText, 'gatehouse_auth_decisions_total{result="bypassed"}'), 15);
    assert.equal(sample(metricsText, 'gatehouse_auth_decisions_total{result="error"}'), 0);
  });

  it('counts the answers of the rate-limit stage, a 429 as over_limit', () => {
    assert.equal(sample(metricsText, 'gatehouse_ratelimit_decisions_total{result="ok"}'), 4);
    assert.equal(sample(metricsText, 'gatehouse_ratelimit_decisions_total{result="over_limit"}'), 1);
    assert.equal(sample(metricsText, 'gatehouse_ratelimit_decisions_total{result="error"}'), 0);
  });

  it('counts an unreachable upstream as refused and a slow one as timeout, by route', () => {
    assert.equal(sample(metricsText, 'gatehouse_upstream_errors_total{route="dead-upstream",kind="refused"}'), 1);
    assert.equal(sample(metricsText, 'gatehouse_upstream_errors_total{route="slow-upstream",kind="timeout"}'), 1);
  });

  it('counts retries by route, breakers that turned a retry away and ejected endpoints by cluster', () => {
    assert.equal(sample(metricsText, 'gatehouse_upstream_retries_total{route="retry-upstream"}'), 1);
    assert.equal(sample(metricsText, 'gatehouse_upstream_retries_total{route="no-retry-upstream"}'), undefined);
    // Four Mappings name the dead upstream with other settings: four clusters, all but the first named with a hash of theirs.
    assert.match(
      metricsText,
      /^gatehouse_upstream_overflows_total\{cluster="cluster_127_0_0_1_[0-9]+_[0-9a-f]{8}",limit="max_retries"\} 1$/m,
    );
    assert.equal(
      metricsText.match(/^gatehouse_upstream_ejections_total\{cluster="cluster_127_0_0_1_[0-9]+_[0-9a-f]{8}"\} 1$/gm)
        ?.length,
      1,
      metricsText,
    );
  });

  it('answers a method other than GET and HEAD with 405, Allow and the JSON error body', async () => {
    const res = await request(running.url).post('/gateway/v0/metrics').expect(405);
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.body, { code: 405, message: '405: Method Not Allowed' });
  });

  it('counts applied and refused reloads', () => {
    assert.equal(sample(metricsText, 'gatehouse_config_reloads_total{result="success"}'), 1);
    assert.equal(sample(metricsText, 'gatehouse_config_reloads_total{result="failure"}'), 1);
  });
});
