/**
 * @module test/bookings/module
 * The module factories: names, kinds, where the app answers, which proxy
 * headers it trusts, where its data comes from and how it reloads.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import mount from 'koa-mount';
import request from 'supertest';
import {
  createBookingModule,
  createCarBookingModule,
  createHotelBookingModule,
  createMemoryBookingStore,
  loadBookingDataSync,
  type BookingKind,
} from '../../src/bookings';
import { DEMO_CONFIG } from '../support/config-folder';
import { DEMO, demoModule } from '../support/bookings';
import { serve } from '../support/server';

const NEW_HOTEL = '0a7d3e55-5c2b-4a8e-9f11-3d2c6b7a8e90';

describe('bookings/module', () => {
  describe('factories', () => {
    it('names the modules as gateway records do', () => {
      assert.equal(createHotelBookingModule().name, 'hotel-booking');
      assert.equal(createCarBookingModule().name, 'car-booking');
      assert.equal(createBookingModule({ kind: 'car' }).kind, 'car');
    });

    it('refuses a kind it does not know', () => {
      assert.throws(
        () => createBookingModule({ kind: 'boat' as BookingKind }),
        /unknown booking kind 'boat'; known kinds: hotel, car/,
      );
    });

    it('refuses a base path that does not start with a slash', () => {
      assert.throws(() => createHotelBookingModule({ basePath: 'v1/hotels' }), /must start with \//);
    });

    it('serves an empty catalogue without data', async () => {
      const res = await request(createHotelBookingModule().app.callback()).get('/v1/hotels').expect(200);
      assert.equal(res.body.total, 0);
    });

    it('keeps the bookings of each kind apart', async () => {
      const data = loadBookingDataSync(DEMO_CONFIG);
      const hotels = createHotelBookingModule({ data }).app.callback();
      const cars = createCarBookingModule({ data }).app.callback();
      await request(hotels).get(`/v1/hotels/bookings/${DEMO.alice.car}`).set('X-Travel-User', 'alice').expect(404);
      await request(cars).get(`/v1/cars/bookings/${DEMO.alice.car}`).set('X-Travel-User', 'alice').expect(200);
      const booked = await request(hotels)
        .post('/v1/hotels/bookings/')
        .set('X-Travel-User', 'alice')
        .send({ hotel_id: DEMO.hotels.auroraOslo, check_in: '2099-08-01' })
        .expect(201);
      await request(cars).get(`/v1/cars/bookings/${booked.body.id}`).set('X-Travel-User', 'alice').expect(404);
    });
  });

  describe('where the app answers', () => {
    it('answers under another base path', async () => {
      const app = demoModule('hotel', { basePath: '/travel/hotels/' }).app.callback();
      await request(app).get('/travel/hotels').expect(200);
      await request(app).get('/v1/hotels').expect(404);
      const res = await request(app)
        .get(`/travel/hotels/bookings/${DEMO.alice.hotel}`)
        .set('X-Travel-User', 'alice')
        .set('Host', 'h.test')
        .expect(200);
      assert.equal(res.body.url, `http://h.test/travel/hotels/bookings/${DEMO.alice.hotel}`);
    });

    it('answers at the root with an empty base path, mounted under a prefix', async () => {
      const outer = new Koa();
      outer.use(mount('/cars', demoModule('car', { basePath: '' }).app));
      const served = await serve(outer);
      try {
        const list = await request(served.server).get('/cars/').expect(200);
        assert.equal(list.body.items[0].url, `${served.origin}/cars/${DEMO.cars.volvoOslo}`);
        const redirect = await request(served.server).get('/cars/bookings').set('X-Travel-User', 'bob').expect(301);
        assert.equal(redirect.headers.location, '/cars/bookings/');
        const made = await request(served.server)
          .post('/cars/bookings/')
          .set('X-Travel-User', 'bob')
          .send({ car_id: DEMO.cars.fiatVenice, pick_up: '2099-08-01', days: 4 })
          .expect(201);
        assert.equal(made.headers.location, `${served.origin}/cars/bookings/${made.body.id}`);
      } finally {
        await served.close();
      }
    });

    it('trusts X-Forwarded-Host and -Proto by default, and not when proxy is off', async () => {
      const forwarded = { 'X-Forwarded-Host': 'travel.example', 'X-Forwarded-Proto': 'https', Host: 'internal:9000' };
      const trusting = await request(demoModule('hotel').app.callback()).get('/v1/hotels/').set(forwarded).expect(200);
      assert.equal(trusting.body.items[0].url, `https://travel.example/v1/hotels/${DEMO.hotels.auroraOslo}`);
      const plain = await request(demoModule('hotel', { proxy: false }).app.callback())
        .get('/v1/hotels/')
        .set(forwarded)
        .expect(200);
      assert.equal(plain.body.items[0].url, `http://internal:9000/v1/hotels/${DEMO.hotels.auroraOslo}`);
    });
  });

  describe('options', () => {
    it('takes a catalogue that overrides the data', async () => {
      const catalogue = [{ id: NEW_HOTEL, name: 'Fjord Cabin', city: 'Bergen', stars: 3 }];
      const module = demoModule('hotel', { catalogue });
      const res = await request(module.app.callback()).get('/v1/hotels').expect(200);
      assert.deepEqual(
        res.body.items.map((h: { id: string }) => h.id),
        [NEW_HOTEL],
      );
      assert.deepEqual(module.catalogue(), catalogue);
    });

    it('keeps bookings in the store it is given', async () => {
      const store = createMemoryBookingStore();
      const module = demoModule('hotel', { store });
      assert.equal(module.store, store);
      await request(module.app.callback())
        .get(`/v1/hotels/bookings/${DEMO.alice.hotel}`)
        .set('X-Travel-User', 'alice')
        .expect(404);
      const made = await request(module.app.callback())
        .post('/v1/hotels/bookings/')
        .set('X-Travel-User', 'alice')
        .send({ hotel_id: DEMO.hotels.harbourOslo, check_in: '2099-10-10', nights: 2 })
        .expect(201);
      assert.equal((await store.get('alice', made.body.id))?.itemId, DEMO.hotels.harbourOslo);
    });

    it('dates bookings with its clock', async () => {
      const module = demoModule('car', { now: () => new Date('2026-05-05T12:00:00Z') });
      const res = await request(module.app.callback())
        .post('/v1/cars/bookings/')
        .set('X-Travel-User', 'bob')
        .send({ car_id: DEMO.cars.traficLisbon, pick_up: '2026-06-01' })
        .expect(201);
      assert.equal(res.body.created_at, '2026-05-05T12:00:00.000Z');
    });

    it('answers 413 above its body limit', async () => {
      const module = demoModule('car', { bodyLimit: 64 });
      const res = await request(module.app.callback())
        .post('/v1/cars/bookings/')
        .set('X-Travel-User', 'bob')
        .send({ car_id: DEMO.cars.traficLisbon, pick_up: '2026-06-01', days: 1, note: 'x'.repeat(64) })
        .expect(413);
      assert.match(res.body.detail, /larger than 64 bytes/);
    });
  });

  describe('a config folder', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), 'gatehouse-bookings-'));
      await copyFile(path.join(DEMO_CONFIG, 'bookings.yaml'), path.join(dir, 'bookings.yaml'));
    });
    afterEach(() => rm(dir, { recursive: true, force: true }));

    const addHotel = async () => {
      const file = path.join(dir, 'bookings.yaml');
      const text = await readFile(file, 'utf8');
      await writeFile(
        file,
        text.replace('\ncars:', `  - {id: ${NEW_HOTEL}, name: Fjord Cabin, city: Bergen, stars: 3}\n\ncars:`),
      );
    };

    it('is read when no data is given', async () => {
      const module = createHotelBookingModule({ configDir: dir });
      await request(module.app.callback())
        .get(`/v1/hotels/bookings/${DEMO.bob.hotel}`)
        .set('X-Travel-User', 'bob')
        .expect(200);
    });

    it('is read again on reload: a new catalogue, the same bookings', async () => {
      const module = createHotelBookingModule({ configDir: dir });
      const app = module.app.callback();
      const made = await request(app)
        .post('/v1/hotels/bookings/')
        .set('X-Travel-User', 'alice')
        .send({ hotel_id: DEMO.hotels.auroraOslo, check_in: '2099-11-01' })
        .expect(201);
      await request(app).get(`/v1/hotels/${NEW_HOTEL}`).expect(404);
      await addHotel();
      await module.reload();
      await request(app).get(`/v1/hotels/${NEW_HOTEL}`).expect(200);
      await request(app).get(`/v1/hotels/bookings/${made.body.id}`).set('X-Travel-User', 'alice').expect(200);
      await request(app)
        .post('/v1/hotels/bookings/')
        .set('X-Travel-User', 'alice')
        .send({ hotel_id: NEW_HOTEL, check_in: '2099-11-01' })
        .expect(201);
    });

    it('keeps the old catalogue when the new file is broken', async () => {
      const module = createHotelBookingModule({ configDir: dir });
      await writeFile(path.join(dir, 'bookings.yaml'), 'hotels:\n  - {id: nope}\n');
      await assert.rejects(module.reload(), /bookings\.yaml: /);
      const res = await request(module.app.callback()).get('/v1/hotels').expect(200);
      assert.equal(res.body.total, 4);
    });

    it('refuses to start on a broken file, naming it', async () => {
      await writeFile(path.join(dir, 'bookings.yaml'), 'cars:\n  - {id: nope}\n');
      assert.throws(
        () => createCarBookingModule({ configDir: dir }),
        (err: Error) => err.message.startsWith(path.join(dir, 'bookings.yaml')),
      );
    });

    it('does nothing on reload without a config folder', async () => {
      const module = demoModule('hotel');
      await module.reload();
      assert.equal(module.catalogue().length, 4);
    });
  });
});
