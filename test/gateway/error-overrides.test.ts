/**
 * `error_response_overrides` through the gateway: the Module's list on every
 * answer of a status it names (a real upstream's, a refusal of a real gRPC
 * ext_authz service, a 429 of a real rate-limit service, the 404 of a path
 * no route takes), a Mapping's own list in its place, and
 * `bypass_error_response_overrides`; in the gateway's own records and in
 * Emissary's two forms.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createGateway, type Gateway, type GatewayConfig } from '../../src/gateway';
import { createAuthStage } from '../../src/gateway/stages/auth-stage';
import { createRateLimitStage } from '../../src/gateway/stages/ratelimit-stage';
import { memoryLogger } from '../support/memory-logger';
import { allowAlice, startExtAuthzServer, type ExtAuthzServer } from '../support/ext-authz-server';
import { startRateLimitAnswerServer, type RateLimitAnswerServer } from '../support/ratelimit-answer-server';
import { close, listen } from '../support/server';
import { configOf, mapping } from '../support/records';
import { recordingUpstream } from '../support/upstreams';
import { send, type Answer } from '../support/client';
import { FORMS, loaded, written } from '../support/emissary';

/** An upstream that answers with the status its path ends with, a JSON body and headers of its own. */
function answerByStatus(req: http.IncomingMessage, res: http.ServerResponse): void {
  const status = Number(/\/([0-9]{3})(\?|$)/.exec(req.url ?? '')?.[1] ?? 200);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/problem+json');
  res.setHeader('ETag', '"v1"');
  res.setHeader('X-Upstream', 'yes');
  res.end(`{"upstream":${status}}`);
}

interface Served {
  readonly url: string;
  readonly upstream: string;
  readonly calls: () => number;
  close(): Promise<void>;
}

/** A gateway serving `config(upstream)` in front of {@link answerByStatus}, with the stages of the gateway. */
async function serve(config: (upstream: string) => GatewayConfig): Promise<Served> {
  const up = await recordingUpstream(answerByStatus);
  const upstream = `127.0.0.1:${up.port}`;
  let gateway: Gateway | undefined;
  let server: http.Server | undefined;
  try {
    gateway = createGateway({
      config: config(upstream),
      stages: {
        auth: (record, modules) => createAuthStage(record, modules, { logger: memoryLogger() }),
        rateLimit: (record, modules, settings) =>
          createRateLimitStage(record, modules, { ...settings, logger: memoryLogger() }),
      },
    });
    ({ server } = await listen(gateway.app.callback()));
  } catch (err) {
    await gateway?.close();
    await close(up.server);
    throw err;
  }
  const built = gateway;
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    upstream,
    calls: () => up.received.length,
    async close() {
      await close(server);
      await built.close();
      await close(up.server);
    },
  };
}

/** Status, Content-Type and body of an answer. */
const seen = (res: Answer) => [res.status, res.headers['content-type'], res.text];

describe('error_response_overrides, in the gateway’s own records', () => {
  let folder: string;
  let authz: ExtAuthzServer;
  let rls: RateLimitAnswerServer;
  let gw: Served;

  before(async () => {
    folder = mkdtempSync(path.join(tmpdir(), 'gatehouse-overrides-'));
    const page = path.join(folder, 'forbidden.html');
    writeFileSync(page, '<h1>%RESPONSE_CODE%: not for you</h1>\n');
    authz = await startExtAuthzServer();
    rls = await startRateLimitAnswerServer();
    const moduleOverrides = [
      { on_status_code: 404, body: { text_format: 'nothing at %REQ(:path)% (%RESPONSE_CODE%), 100%% sure' } },
      {
        on_status_code: 500,
        body: {
          json_format: { status: '%RESPONSE_CODE%', error: 'broken', cluster: '%UPSTREAM_CLUSTER%', retry: false },
        },
      },
      { on_status_code: 403, body: { text_format_source: { filename: page }, content_type: 'text/html' } },
      { on_status_code: 429, body: { text_format: 'slow down on %ROUTE_NAME%, %REQ(x-missing?user-agent):4%' } },
    ];
    gw = await serve((up) =>
      configOf(
        {
          apiVersion: 'gateway/v1',
          kind: 'Module',
          name: 'ambassador',
          config: { error_response_overrides: moduleOverrides },
        },
        mapping('/shop/', up, { name: 'shop' }),
        mapping('/own/', up, {
          name: 'own',
          error_response_overrides: [{ on_status_code: 404, body: { text_format: 'own page' } }],
        }),
        mapping('/raw/', up, { name: 'raw', bypass_error_response_overrides: true }),
        mapping('/busy/', up, { name: 'busy', labels: { shop: [{ busy: [{ generic_key: 'busy' }] }] } }),
        { apiVersion: 'gateway/v1', kind: 'AuthService', name: 'authz', auth_service: authz.address, proto: 'grpc' },
        { apiVersion: 'gateway/v1', kind: 'RateLimitService', name: 'limits', service: rls.address, domain: 'shop' },
      ),
    );
  });
  beforeEach(() => {
    authz.answer = allowAlice;
    rls.answer = () => ({ overall_code: 'OK' });
  });
  after(async () => {
    await gw?.close();
    await authz?.close();
    await rls?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it("replaces the body of an upstream's answer of a status the Module names, keeping its other headers", async () => {
    const res = await send(gw.url, '/shop/items/404?color=red');
    assert.deepEqual(seen(res), [404, 'text/plain', 'nothing at /shop/items/404?color=red (404), 100% sure']);
    assert.deepEqual([res.headers['x-upstream'], res.headers.etag], ['yes', undefined]);
    const json = await send(gw.url, '/shop/items/500');
    assert.deepEqual([json.status, json.headers['content-type']], [500, 'application/json']);
    assert.equal(json.text, `{"cluster":"${clusterOf(gw.upstream)}","error":"broken","retry":"false","status":500}\n`);
  });

  it('leaves an answer of any other status as the upstream gave it', async () => {
    for (const status of [200, 401, 503]) {
      const res = await send(gw.url, `/shop/items/${status}`);
      assert.deepEqual(seen(res), [status, 'application/problem+json', `{"upstream":${status}}`]);
    }
  });

  it("gives the gateway's own answers the body too: a path no route takes, an auth refusal, a 429", async () => {
    assert.deepEqual(seen(await send(gw.url, '/nowhere')), [404, 'text/plain', 'nothing at /nowhere (404), 100% sure']);
    authz.answer = () => ({ status: { code: 7 }, denied_response: { status: { code: 403 }, body: 'no' } });
    assert.deepEqual(seen(await send(gw.url, '/shop/x')), [403, 'text/html', '<h1>403: not for you</h1>\n']);
    authz.answer = allowAlice;
    rls.answer = () => ({ overall_code: 'OVER_LIMIT' });
    const limited = await send(gw.url, '/busy/x', { headers: { 'User-Agent': 'curl/8.5' } });
    assert.deepEqual(seen(limited), [429, 'text/plain', 'slow down on busy, curl']);
    assert.equal(limited.headers['x-envoy-ratelimited'], 'true');
  });

  it("takes a Mapping's own list instead of the Module's, and none with bypass_error_response_overrides", async () => {
    assert.deepEqual(seen(await send(gw.url, '/own/404')), [404, 'text/plain', 'own page']);
    assert.deepEqual(seen(await send(gw.url, '/own/500')), [500, 'application/problem+json', '{"upstream":500}']);
    assert.deepEqual(seen(await send(gw.url, '/raw/404')), [404, 'application/problem+json', '{"upstream":404}']);
  });
});

/** The name Emissary gives the cluster of a Mapping to `127.0.0.1:<port>`. */
function clusterOf(upstream: string): string {
  return `cluster_${upstream.replace(/[^A-Za-z0-9]/g, '_')}`;
}

for (const form of FORMS) {
  describe(`error_response_overrides, in Emissary's ${form === 'resource' ? 'resources' : 'annotation'}`, () => {
    let gw: Served;
    before(async () => {
      gw = await serve(
        (up) =>
          loaded(
            written(
              form,
              {
                kind: 'Module',
                name: 'ambassador',
                spec: {
                  config: {
                    error_response_overrides: [
                      { on_status_code: 404, body: { json_format: { error: 'file not found', code: 404 } } },
                    ],
                  },
                },
              },
              { kind: 'Mapping', name: 'shop', spec: { prefix: '/shop/', service: up } },
              {
                kind: 'Mapping',
                name: 'api',
                spec: { prefix: '/api/', service: up, bypass_error_response_overrides: true },
              },
              {
                kind: 'Mapping',
                name: 'ui',
                spec: {
                  prefix: '/ui/',
                  service: up,
                  error_response_overrides: [
                    { on_status_code: '404', body: { text_format: '<p>%REQ(:path)%</p>', content_type: 'text/html' } },
                  ],
                },
              },
            ),
          ).config,
      );
    });
    after(() => gw?.close());

    it("answers as Emissary's documented example does: the Module's JSON, a Mapping's own text, a bypass untouched", async () => {
      assert.deepEqual(seen(await send(gw.url, '/shop/404')), [
        404,
        'application/json',
        '{"code":"404","error":"file not found"}\n',
      ]);
      assert.deepEqual(seen(await send(gw.url, '/ui/404')), [404, 'text/html', '<p>/ui/404</p>']);
      assert.deepEqual(seen(await send(gw.url, '/api/404')), [404, 'application/problem+json', '{"upstream":404}']);
      assert.equal(gw.calls(), 3);
    });
  });
}
