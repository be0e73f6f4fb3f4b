import assert from 'node:assert/strict';
import type http from 'node:http';
import { join } from 'node:path';
import { ConfigError, createGateway, loadConfig, type GatewayConfig, type Stage } from '../../../src/gateway';
import { close, listen } from '../../support/server';
import { echoModule, registry, type Echo } from '../../support/modules';
import { send } from '../../support/client';

const CONFIG_DIR = join(__dirname, '..', '..', '..', 'config');
const passing: Stage = { run: async () => true };
const stages = { auth: () => passing, rateLimit: () => passing };

async function demoConfig(): Promise<GatewayConfig> {
  const result = await loadConfig(CONFIG_DIR);
  if (!result.ok) assert.fail(result.problems.map((p) => p.text).join('\n'));
  return result.config;
}

describe('gateway demo configuration', () => {
  it('loads from config/, with its routes, auth and rate-limit records', async () => {
    const config = await demoConfig();
    assert.deepEqual(
      config.mappings.map((m) => [m.name, m.prefix, m.service, m.rewrite, m.bypass_auth]),
      [
        ['hotels-mapping', '/v1/hotels', 'hotel-booking', '', false],
        ['cars-mapping', '/v1/cars', 'car-booking', '', false],
        ['api-v1', '/v1', 'api', '', true],
        ['api-v2', '/v2', 'api', '', true],
        ['diag-mapping', '/gateway/v0/diag', 'diag', '/', false],
      ],
    );
    assert.deepEqual(config.mappings[0].labels, {
      gateway: [
        {
          request_label_group: [
            { 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } },
          ],
        },
        { request_label_group: [{ user: { header: 'x-travel-user', omit_if_not_present: false } }] },
      ],
    });
    assert.equal(config.authService?.auth_service, 'auth');
    assert.deepEqual(config.authService?.allowed_authorization_headers, ['x-travel-user']);
    assert.equal(config.rateLimitService?.service, 'ratelimit');
    assert.equal(config.rateLimitService?.domain, 'gateway');
    assert.deepEqual(config.sources, [join(CONFIG_DIR, 'services.yaml')]);
    assert.deepEqual(config.recordSources?.get(config.mappings[0]), {
      file: join(CONFIG_DIR, 'services.yaml'),
      service: 'hotels',
    });
  });

  it('cannot be served without the modules it names, and says which', async () => {
    const config = await demoConfig();
    const modules = registry(echoModule('car-booking'), echoModule('api'), echoModule('diag'));
    assert.throws(
      () => createGateway({ config, modules, stages }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.problems.length === 1 &&
        err.problems[0].text ===
          `${join(CONFIG_DIR, 'services.yaml')}: service hotels: Mapping hotels-mapping: service: module 'hotel-booking' is not running here (modules: api, car-booking, diag); a Kubernetes Service of that name is written hotel-booking.<namespace>, hotel-booking:80 or http://hotel-booking`,
    );
  });

  describe('served with stand-in modules', () => {
    let server: http.Server;
    let base: string;
    let close_: () => Promise<void>;

    before(async () => {
      const modules = registry(...['hotel-booking', 'car-booking', 'api', 'diag'].map(echoModule));
      const gateway = createGateway({ config: await demoConfig(), modules, stages });
      ({ server, url: base } = await listen(gateway.app.callback()));
      close_ = () => gateway.close();
    });

    after(async () => {
      await close(server);
      await close_();
    });

    const routes: [string, string, string][] = [
      ['/v1/hotels', 'hotel-booking', '/v1/hotels'],
      ['/v1/hotels/bookings/2b5f', 'hotel-booking', '/v1/hotels/bookings/2b5f'],
      ['/v1/cars/bookings/2b5f', 'car-booking', '/v1/cars/bookings/2b5f'],
      ['/v1/messages/1', 'api', '/v1/messages/1'],
      ['/v1', 'api', '/v1'],
      ['/v2/messages/', 'api', '/v2/messages/'],
      ['/v1/hotelsX', 'api', '/v1/hotelsX'],
      ['/gateway/v0/diag/', 'diag', '/'],
      ['/gateway/v0/diag', 'diag', '/'],
      ['/gateway/v0/diag/data.json', 'diag', '/data.json'],
    ];
    for (const [path, module, seen] of routes) {
      it(`routes ${path} to ${module} as ${seen}`, async () => {
        const res = await send(base, path);
        assert.equal(res.status, 200, res.text);
        const echo = res.json() as Echo;
        assert.equal(echo.module, module);
        assert.equal(echo.path, seen);
      });
    }

    it('answers paths outside every mapping with 404', async () => {
      for (const path of ['/v3/messages/1', '/v1x', '/v2messages/1', '/gateway/v0/diagnostics']) {
        assert.equal((await send(base, path)).status, 404, path);
      }
    });
  });
});
