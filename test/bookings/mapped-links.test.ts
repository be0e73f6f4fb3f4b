/**
 * @module test/bookings/mapped-links
 * The booking services behind a real gateway whose Mapping rewrites another
 * prefix to theirs (`/stay/` to `/v1/hotels/`): every url, next link,
 * Location and Content-Location is under the prefix the client used.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import request from 'supertest';
import { createAuthService, type AuthService } from '../../src/auth';
import { createHotelBookingModule, loadBookingDataSync } from '../../src/bookings';
import { createGateway, type Gateway } from '../../src/gateway';
import { close } from '../support/server';
import { configOf, mapping } from '../support/records';
import { registry } from '../support/modules';
import { DEMO_CONFIG } from '../support/config-folder';
import { DEMO } from '../support/bookings';
import { NO_BOUND_MS } from '../support/polling';

const HOST = 'travel.test';
const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
const quiet = { info() {}, warn() {}, error() {} };

describe('bookings behind a Mapping that rewrites to their path', () => {
  let auth: AuthService;
  let gateway: Gateway;
  let server: http.Server;
  const get = (p: string) => request(server).get(p).set('Host', HOST).set('Authorization', ALICE);

  before(async () => {
    auth = createAuthService({
      maxWaitMs: NO_BOUND_MS,
      usersFile: path.join(DEMO_CONFIG, 'users.htpasswd'),
      logger: quiet,
    });
    const config = configOf(
      mapping('/stay/', 'hotel-booking', { rewrite: '/v1/hotels/' }),
      mapping('/my-stays/', 'hotel-booking', { rewrite: '/v1/hotels/bookings/' }),
      mapping('/v1/hotels', 'hotel-booking', { rewrite: '' }),
      {
        apiVersion: 'gateway/v1',
        kind: 'AuthService',
        name: 'authentication',
        auth_service: 'auth',
        proto: 'http',
        allowed_authorization_headers: ['X-Travel-User'],
      },
    );
    gateway = createGateway({
      config,
      modules: registry(auth, createHotelBookingModule({ data: loadBookingDataSync(DEMO_CONFIG) })),
    });
    server = http.createServer(gateway.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await close(server);
    await gateway.close();
    await auth.close();
  });

  it('writes catalogue urls and next under the prefix', async () => {
    const res = await get('/stay/?limit=1').expect(200);
    assert.equal(res.body.next, `http://${HOST}/stay/?limit=1&offset=1`);
    assert.equal(res.headers.link, `<http://${HOST}/stay/?limit=1&offset=1>; rel="next"`);
    assert.equal(res.body.items[0].url, `http://${HOST}/stay/${res.body.items[0].id}`);
    const one = await get(`/stay/${DEMO.hotels.auroraOslo}`).expect(200);
    assert.equal(one.body.url, `http://${HOST}/stay/${DEMO.hotels.auroraOslo}`);
  });

  it('writes booking urls under the prefix, and redirects there', async () => {
    const res = await get('/stay/bookings/').expect(200);
    assert.ok(res.body.items.length > 0);
    for (const item of res.body.items) assert.equal(item.url, `http://${HOST}/stay/bookings/${item.id}`);
    await get(res.body.items[0].url.slice(`http://${HOST}`.length)).expect(200);
    await get('/stay/bookings?limit=1').expect(301).expect('Location', '/stay/bookings/?limit=1');
  });

  it('writes what a narrower prefix does not cover as the service answers it', async () => {
    const res = await get('/my-stays/').expect(200);
    const booking = res.body.items[0];
    assert.equal(booking.url, `http://${HOST}/my-stays/${booking.id}`);
    const one = await get(`/my-stays/${booking.id}`).expect(200);
    assert.equal(one.body.url, booking.url);
    // The catalogue is no path of /my-stays/: its own path, which /v1/hotels routes.
    assert.equal(one.body.hotel_id, DEMO.hotels.auroraOslo);
  });

  it("changes nothing for the service's own paths", async () => {
    await get('/v1/hotels?limit=1').expect(200).expect('Content-Location', `http://${HOST}/v1/hotels/`);
    const res = await get('/v1/hotels/?limit=1').expect(200);
    assert.equal(res.body.next, `http://${HOST}/v1/hotels/?limit=1&offset=1`);
    await get('/v1/hotels/bookings').expect(301).expect('Location', '/v1/hotels/bookings/');
  });
});
