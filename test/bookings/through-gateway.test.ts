/**
 * @module test/bookings/through-gateway
 * The booking services behind the whole gateway, with the auth service and
 * the demo users of config/users.htpasswd: credentials decide who the user
 * is, and an `X-Travel-User` sent by a client changes nothing.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import request from 'supertest';
import { createAuthService, type AuthService } from '../../src/auth';
import { createCarBookingModule, createHotelBookingModule, loadBookingDataSync } from '../../src/bookings';
import { configFromRecords, createGateway, type Gateway, type GatehouseModule } from '../../src/gateway';
import { DEMO_CONFIG } from '../support/config-folder';
import { DEMO } from '../support/bookings';
import { serve, type Served } from '../support/server';

const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
const BOB = `Basic ${Buffer.from('bob:builder').toString('base64')}`;
const WRONG = `Basic ${Buffer.from('alice:builder').toString('base64')}`;

const quiet = { info() {}, warn() {}, error() {} };

/** The demo routing: both prefixes forwarded unchanged, every request authenticated. */
const records = [
  {
    apiVersion: 'gateway/v1',
    kind: 'Mapping',
    name: 'hotels',
    prefix: '/v1/hotels',
    rewrite: '',
    service: 'hotel-booking',
  },
  { apiVersion: 'gateway/v1', kind: 'Mapping', name: 'cars', prefix: '/v1/cars', rewrite: '', service: 'car-booking' },
  {
    apiVersion: 'gateway/v1',
    kind: 'AuthService',
    name: 'authentication',
    auth_service: 'auth',
    proto: 'http',
    allowed_authorization_headers: ['X-Travel-User'],
  },
];

describe('bookings through the gateway', () => {
  let auth: AuthService;
  let gateway: Gateway;
  let served: Served;
  const api = () => request(served.server);

  before(async () => {
    const result = configFromRecords(records);
    if (!result.ok) assert.fail(JSON.stringify(result.problems));
    const data = loadBookingDataSync(DEMO_CONFIG);
    auth = createAuthService({ usersFile: path.join(DEMO_CONFIG, 'users.htpasswd'), logger: quiet });
    const modules = new Map<string, GatehouseModule>([
      ['auth', auth],
      ['hotel-booking', createHotelBookingModule({ data })],
      ['car-booking', createCarBookingModule({ data })],
    ]);
    gateway = createGateway({ config: result.config, modules });
    served = await serve(gateway.app);
  });
  after(async () => {
    await served.close();
    await gateway.close();
    await auth.close();
  });

  it('answers GET /v1/hotels with 200 for the demo credentials', async () => {
    for (const credentials of [ALICE, BOB]) {
      const res = await api().get('/v1/hotels').set('Authorization', credentials).expect(200);
      assert.equal(res.body.total, 4);
    }
    await api().get('/v1/hotels').set('Authorization', ALICE).set('X-Gateway-Test-Allow', 'yes').expect(200);
  });

  it('answers 401 without credentials or with a wrong password, before any booking service', async () => {
    for (const res of [
      await api().get('/v1/hotels').expect(401),
      await api().get(`/v1/hotels/bookings/${DEMO.alice.hotel}`).expect(401),
      await api().get(`/v1/cars/bookings/${DEMO.alice.car}`).set('Authorization', WRONG).expect(401),
      await api().get(`/v1/hotels/bookings/${DEMO.alice.hotel}`).set('X-Travel-User', 'alice').expect(401),
    ]) {
      assert.match(res.headers['www-authenticate'], /^Basic realm=/);
      assert.equal(res.body.code, 401);
      assert.equal(res.body.items, undefined);
      assert.equal(res.body.id, undefined);
    }
  });

  it("reads each demo user's bookings of both kinds with their own credentials", async () => {
    const cases = [
      [ALICE, `/v1/hotels/bookings/${DEMO.alice.hotel}`, 'hotel_id', DEMO.hotels.auroraOslo],
      [ALICE, `/v1/cars/bookings/${DEMO.alice.car}`, 'car_id', DEMO.cars.volvoOslo],
      [BOB, `/v1/hotels/bookings/${DEMO.bob.hotel}`, 'hotel_id', DEMO.hotels.grandCanalVenice],
      [BOB, `/v1/cars/bookings/${DEMO.bob.car}`, 'car_id', DEMO.cars.fiatVenice],
    ];
    for (const [credentials, path, field, item] of cases) {
      const res = await api()
        .get(path)
        .set('Authorization', credentials)
        .expect(200)
        .expect('Content-Type', /^application\/json/);
      assert.equal(res.body.status, 'confirmed');
      assert.equal(res.body[field], item);
      assert.equal(res.body.url, `${served.origin}${path}`);
    }
  });

  it("answers 404 for the other demo user's booking", async () => {
    await api().get(`/v1/hotels/bookings/${DEMO.bob.hotel}`).set('Authorization', ALICE).expect(404);
    await api().get(`/v1/cars/bookings/${DEMO.alice.car}`).set('Authorization', BOB).expect(404);
  });

  it('acts as the user of the credentials when a client sends another X-Travel-User', async () => {
    const read = await api()
      .get(`/v1/hotels/bookings/${DEMO.bob.hotel}`)
      .set('Authorization', ALICE)
      .set('X-Travel-User', 'bob')
      .expect(404);
    assert.equal(read.body.code, 404);
    const own = await api()
      .get(`/v1/hotels/bookings/${DEMO.alice.hotel}`)
      .set('Authorization', ALICE)
      .set('X-Travel-User', 'bob')
      .expect(200);
    assert.equal(own.body.user, 'alice');
    const list = await api()
      .get('/v1/cars/bookings/')
      .set('Authorization', ALICE)
      .set('X-Travel-User', 'bob')
      .expect(200);
    assert.deepEqual(
      list.body.items.map((b: { user: string }) => b.user),
      ['alice'],
    );
    await api()
      .delete(`/v1/cars/bookings/${DEMO.bob.car}`)
      .set('Authorization', ALICE)
      .set('X-Travel-User', 'bob')
      .expect(404);
    const bobs = await api().get(`/v1/cars/bookings/${DEMO.bob.car}`).set('Authorization', BOB).expect(200);
    assert.equal(bobs.body.status, 'confirmed');
  });

  it('books for the user of the credentials, whatever X-Travel-User says', async () => {
    const made = await api()
      .post('/v1/hotels/bookings/')
      .set('Authorization', ALICE)
      .set('X-Travel-User', 'bob')
      .send({ hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-12-20', nights: 4 })
      .expect(201);
    assert.equal(made.body.user, 'alice');
    assert.equal(made.headers.location, `${served.origin}/v1/hotels/bookings/${made.body.id}`);
    const path = new URL(made.headers.location).pathname;
    await api().get(path).set('Authorization', BOB).expect(404);
    await api().get(path).set('Authorization', ALICE).expect(200);
    const cancelled = await api().delete(path).set('Authorization', ALICE).expect(200);
    assert.equal(cancelled.body.status, 'cancelled');
  });

  it('passes the redirect of a slashless collection through, under the gateway', async () => {
    const res = await api().get('/v1/cars/bookings?status=confirmed').set('Authorization', BOB).expect(301);
    assert.equal(res.headers.location, '/v1/cars/bookings/?status=confirmed');
  });
});
