/**
 * @module test/bookings/idempotency
 * `Idempotency-Key` on `POST .../bookings/`, as a client sends it: the
 * draft's quoted string or Stripe's bare value, one header, printable ASCII,
 * at most 255 characters; anything else a 400 that makes no booking. A
 * retry answers the first booking with `Idempotent-Replayed: true`; the key
 * with another request is a 422; keys are the user's own.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { idempotencyKeyOf } from '../../src/bookings';
import { HttpError } from '../../src/http';
import { demoModule, DEMO } from '../support/bookings';
import { serve, type Served } from '../support/server';

const BODY = { hotel_id: DEMO.hotels.auroraOslo, check_in: '2099-05-01' };
const raw = (...lines: string[]) => lines.flatMap((line) => line.split(/: (.*)/s).slice(0, 2));

describe('bookings/idempotency: reading Idempotency-Key', () => {
  it('takes the quoted string of the draft and the bare value of Stripe as one key', () => {
    assert.equal(
      idempotencyKeyOf(raw('Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"')),
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    assert.equal(
      idempotencyKeyOf(raw('idempotency-key: 8e03978e-40d5-43e8-bc93-6894a57f9324')),
      '8e03978e-40d5-43e8-bc93-6894a57f9324',
    );
    assert.equal(idempotencyKeyOf(raw('Idempotency-Key: "a \\"quoted\\" key"')), 'a "quoted" key');
    assert.equal(idempotencyKeyOf(raw('Content-Type: application/json')), undefined);
    assert.equal(idempotencyKeyOf(raw('Idempotency-Key: ' + 'k'.repeat(255))), 'k'.repeat(255));
  });

  for (const [what, lines] of [
    ['an empty value', ['Idempotency-Key: ']],
    ['an empty quoted string', ['Idempotency-Key: ""']],
    ['an unterminated quoted string', ['Idempotency-Key: "abc']],
    ['a bare value with a space', ['Idempotency-Key: a b']],
    ['a value past 255 characters', ['Idempotency-Key: ' + 'k'.repeat(256)]],
    ['a value that is not ASCII', ['Idempotency-Key: clé']],
    ['two keys', ['Idempotency-Key: a', 'Idempotency-Key: b']],
  ] as const) {
    it(`refuses ${what} with a 400`, () => {
      assert.throws(
        () => idempotencyKeyOf(raw(...lines)),
        (err: unknown) => err instanceof HttpError && err.status === 400,
      );
    });
  }
});

describe('bookings/idempotency: a booking service answering retries', () => {
  let served: Served;
  before(async () => {
    served = await serve(demoModule('hotel').app);
  });
  after(() => served.close());
  const post = (user: string, key?: string, body: object = BODY) => {
    const req = request(served.server).post('/v1/hotels/bookings/').set('X-Travel-User', user);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const count = async (user: string) =>
    (await request(served.server).get('/v1/hotels/bookings/').set('X-Travel-User', user).expect(200)).body.total;

  it('answers a retry 201 with the first booking and Idempotent-Replayed: true, and makes no second', async () => {
    const first = await post('uma', 'order-1').expect(201);
    const again = await post('uma', 'order-1').expect(201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers.location, first.headers.location);
    assert.deepEqual(again.body, first.body);
    assert.equal(await count('uma'), 1);
  });

  it('answers a retry with the first booking when its start day has passed since, or its item left the catalogue', async () => {
    let clock = new Date('2030-06-10T11:59:00Z');
    const module = demoModule('hotel', { now: () => clock });
    const app = module.app.callback();
    const book = (key?: string) => {
      const req = request(app).post('/v1/hotels/bookings/').set('X-Travel-User', 'zoe');
      return (key === undefined ? req : req.set('Idempotency-Key', key)).send({
        hotel_id: DEMO.hotels.auroraOslo,
        check_in: '2030-06-09',
      });
    };
    // 23:59 on the 9th in UTC-12: still bookable.
    const first = await book('late-1').expect(201);
    clock = new Date('2030-06-10T12:01:00Z');
    const again = await book('late-1').expect(201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.body.created_at, first.body.created_at);
    const fresh = await book('late-2').expect(400);
    assert.equal(fresh.body.detail, 'check_in: must not be in the past');
    module.useData({ hotels: [], cars: [], hotel_bookings: [], car_bookings: [] });
    clock = new Date('2030-06-10T11:00:00Z');
    const gone = await book('late-1').expect(201);
    assert.equal(gone.body.id, first.body.id);
    assert.match((await book('late-3').expect(400)).body.detail, /^hotel_id: no hotel has the id /);
  });

  it('answers the key with another request 422 with the error body, and makes nothing', async () => {
    await post('vic', 'order-2').expect(201);
    const res = await post('vic', 'order-2', { ...BODY, nights: 2 }).expect(422);
    assert.equal(res.body.code, 422);
    assert.equal(res.body.message, '422: Unprocessable Entity');
    assert.equal(await count('vic'), 1);
  });

  it('keeps keys per user', async () => {
    const a = await post('wendy', 'order-3').expect(201);
    const b = await post('xavier', 'order-3').expect(201);
    assert.notEqual(a.body.id, b.body.id);
    assert.equal(b.headers['idempotent-replayed'], undefined);
  });

  it('answers a malformed key 400 naming the header, and makes no booking', async () => {
    const res = await post('yara', 'two words').expect(400);
    assert.match(res.body.detail, /^Idempotency-Key must be 1 to 255 printable ASCII characters/);
    assert.equal(await count('yara'), 0);
  });

  it('answers two Idempotency-Key lines 400, rather than taking one of them', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${served.origin}/v1/hotels/bookings/`, {
        method: 'POST',
        headers: [
          ['X-Travel-User', 'zoe'],
          ['Content-Type', 'application/json'],
          ['Idempotency-Key', 'a'],
          ['Idempotency-Key', 'b'],
        ].flat(),
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(JSON.stringify(BODY));
    });
    assert.equal(status, 400);
    assert.equal(await count('zoe'), 0);
  });
});
