/**
 * @module test/bookings/request
 * Making and cancelling bookings, for both kinds: what a booking request must
 * look like, what is answered for each problem, and that a refused request
 * stores nothing.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { demoModule, KIND_CASES, UNKNOWN_ID } from '../support/bookings';
import { serve, type Served } from '../support/server';

for (const k of KIND_CASES) {
  const bookings = `${k.base}/bookings`;
  const valid = { [k.itemField]: k.item, [k.startField]: '2099-08-01', [k.lengthField]: 2 };

  describe(`bookings/request (${k.kind})`, () => {
    let served: Served;
    beforeEach(async () => {
      served = await serve(demoModule(k.kind).app);
    });
    afterEach(() => served.close());
    const api = () => request(served.server);
    const listOf = async (user: string) =>
      (await api().get(`${bookings}/?limit=100`).set('X-Travel-User', user).expect(200)).body;

    describe('booking', () => {
      it('answers 201 with Location and the confirmed booking', async () => {
        const sent = Date.now();
        const res = await api().post(`${bookings}/`).set('X-Travel-User', 'alice').send(valid).expect(201);
        const answered = Date.now();
        assert.match(res.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        assert.equal(res.headers.location, `${served.origin}${bookings}/${res.body.id}`);
        assert.equal(res.body.url, res.headers.location);
        assert.equal(res.body.status, 'confirmed');
        assert.equal(res.body.user, 'alice');
        assert.equal(res.body[k.itemField], k.item);
        assert.equal(res.body[k.startField], '2099-08-01');
        assert.equal(res.body[k.lengthField], 2);
        // Made while the request was under way, however long a loaded machine made that.
        const created = Date.parse(res.body.created_at);
        assert.ok(sent <= created && created <= answered, res.body.created_at);
      });

      it('makes the booking readable at its Location and listed for its owner only', async () => {
        const made = await api().post(`${bookings}/`).set('X-Travel-User', 'alice').send(valid).expect(201);
        const read = await api().get(new URL(made.headers.location).pathname).set('X-Travel-User', 'alice').expect(200);
        assert.deepEqual(read.body, made.body);
        assert.ok((await listOf('alice')).items.some((b: { id: string }) => b.id === made.body.id));
        assert.ok(!(await listOf('bob')).items.some((b: { id: string }) => b.id === made.body.id));
        await api().get(`${bookings}/${made.body.id}`).set('X-Travel-User', 'bob').expect(404);
      });

      it(`books one ${k.lengthField === 'nights' ? 'night' : 'day'} when ${k.lengthField} is left out`, async () => {
        const res = await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'bob')
          .send({ [k.itemField]: k.item, [k.startField]: '2099-08-01' })
          .expect(201);
        assert.equal(res.body[k.lengthField], 1);
      });

      it('takes the item id in any case and stores it in lower case', async () => {
        const res = await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'bob')
          .send({ ...valid, [k.itemField]: k.item.toUpperCase() })
          .expect(201);
        assert.equal(res.body[k.itemField], k.item);
      });

      it('takes a media type with parameters or a +json suffix', async () => {
        await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'bob')
          .set('Content-Type', 'application/json; charset=utf-8')
          .send(JSON.stringify(valid))
          .expect(201);
        await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'bob')
          .set('Content-Type', 'application/vnd.booking+json')
          .send(JSON.stringify(valid))
          .expect(201);
      });

      it('builds Location from X-Forwarded-Proto and -Host behind the gateway', async () => {
        const res = await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'alice')
          .set('X-Forwarded-Proto', 'https')
          .set('X-Forwarded-Host', 'travel.example')
          .send(valid)
          .expect(201);
        assert.equal(res.headers.location, `https://travel.example${bookings}/${res.body.id}`);
      });

      it('loses no booking to 100 concurrent requests', async () => {
        const before = (await listOf('carol')).total;
        const made = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            api()
              .post(`${bookings}/`)
              .set('X-Travel-User', 'carol')
              .send({ ...valid, [k.lengthField]: (i % 30) + 1 })
              .expect(201),
          ),
        );
        const ids = new Set(made.map((res) => res.body.id as string));
        assert.equal(ids.size, 100);
        const page1 = await api().get(`${bookings}/?limit=100`).set('X-Travel-User', 'carol').expect(200);
        assert.equal(page1.body.total, before + 100);
        for (const b of page1.body.items) ids.delete(b.id);
        assert.equal(ids.size, 0);
      });

      it('keeps the seeded bookings when others are added', async () => {
        await Promise.all(
          Array.from({ length: 20 }, () =>
            api().post(`${bookings}/`).set('X-Travel-User', 'alice').send(valid).expect(201),
          ),
        );
        const list = await listOf('alice');
        assert.ok(list.items.some((b: { id: string }) => b.id === k.alice));
        assert.ok(list.total >= 21);
      });
    });

    describe('refused booking requests', () => {
      const refusals: [string, unknown, RegExp][] = [
        [
          'an unknown item',
          { ...valid, [k.itemField]: UNKNOWN_ID },
          new RegExp(`${k.itemField}: no ${k.kind} has the id ${UNKNOWN_ID}`),
        ],
        [
          'an item id that is not a UUID',
          { ...valid, [k.itemField]: 'suite-12' },
          new RegExp(`${k.itemField}: must be a UUID`),
        ],
        [
          'an item id that is not a string',
          { ...valid, [k.itemField]: 12 },
          new RegExp(`${k.itemField}: must be a string`),
        ],
        ['a missing item id', { [k.startField]: '2099-08-01' }, new RegExp(`${k.itemField}: is required`)],
        ['a missing start day', { [k.itemField]: k.item }, new RegExp(`${k.startField}: is required`)],
        [
          'a start day that is not a date, said once',
          { ...valid, [k.startField]: 'next friday' },
          new RegExp(`^${k.startField}: must be a date \\(YYYY-MM-DD\\)$`),
        ],
        [
          'a start day with a time, said once',
          { ...valid, [k.startField]: '2026-08-01T10:00:00Z' },
          new RegExp(`^${k.startField}: must be a date \\(YYYY-MM-DD\\)$`),
        ],
        [
          'a start day that is not in the calendar',
          { ...valid, [k.startField]: '2099-02-30' },
          new RegExp(`${k.startField}: is not a day of the calendar`),
        ],
        [
          'a length that is a string',
          { ...valid, [k.lengthField]: '2' },
          new RegExp(`${k.lengthField}: must be a number`),
        ],
        ['a length of zero', { ...valid, [k.lengthField]: 0 }, new RegExp(`${k.lengthField}: must be at least 1`)],
        [
          'a length over the maximum',
          { ...valid, [k.lengthField]: 31 },
          new RegExp(`${k.lengthField}: must be at most 30`),
        ],
        [
          'a fractional length',
          { ...valid, [k.lengthField]: 1.5 },
          new RegExp(`${k.lengthField}: must be a whole number`),
        ],
        [
          'a whole length past 2^53, said once as too long',
          { ...valid, [k.lengthField]: 1e26 },
          new RegExp(`^${k.lengthField}: must be at most 30$`),
        ],
        ['an unknown field', { ...valid, status: 'cancelled' }, /unknown field 'status'; known fields:/],
        ['a user in the body', { ...valid, user: 'bob' }, /unknown field 'user'/],
        ['a body that is a list', [valid], /the request body must be a JSON object/],
        ['a body that is null', null, /the request body must be a JSON object/],
      ];

      for (const [what, body, detail] of refusals) {
        it(`answers 400 naming the problem for ${what}, and stores nothing`, async () => {
          const before = await listOf('alice');
          const res = await api()
            .post(`${bookings}/`)
            .set('X-Travel-User', 'alice')
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body))
            .expect(400);
          assert.equal(res.body.code, 400);
          assert.equal(res.body.message, '400: Bad Request');
          assert.match(res.body.detail, detail);
          assert.equal(res.headers.location, undefined);
          assert.deepEqual(await listOf('alice'), before);
        });
      }

      describe('a start day that has passed, by the module clock', () => {
        const at = (iso: string) => demoModule(k.kind, { now: () => new Date(iso) }).app.callback();
        const book = (app: ReturnType<typeof at>, day: string) =>
          request(app)
            .post(`${bookings}/`)
            .set('X-Travel-User', 'alice')
            .send({ ...valid, [k.startField]: day });

        it('answers 400 for a day long gone, and stores nothing', async () => {
          const app = at('2026-05-05T12:00:00Z');
          const res = await book(app, '1999-01-01').expect(400);
          assert.deepEqual(res.body, {
            code: 400,
            message: '400: Bad Request',
            detail: `${k.startField}: must not be in the past`,
          });
          const list = await request(app)
            .get(`${bookings}/?${k.startField}=1999-01-01`)
            .set('X-Travel-User', 'alice')
            .expect(200);
          assert.equal(list.body.total, 0);
        });

        it('answers 400 for yesterday once yesterday is over everywhere, and books today', async () => {
          const app = at('2026-05-05T12:00:00Z');
          await book(app, '2026-05-04').expect(400);
          const res = await book(app, '2026-05-05').expect(201);
          assert.equal(res.body[k.startField], '2026-05-05');
        });

        it('books yesterday by UTC while it is still that day west of UTC', async () => {
          await book(at('2026-05-05T03:00:00Z'), '2026-05-04').expect(201);
        });
      });

      it('names every problem of a body at once', async () => {
        const res = await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'alice')
          .send({ [k.startField]: 'soon', extra: 1 })
          .expect(400);
        for (const part of [k.itemField, k.startField, "'extra'"])
          assert.ok(res.body.detail.includes(part), res.body.detail);
      });

      it('answers 400 for a body that is not JSON, and stores nothing', async () => {
        const before = await listOf('alice');
        const res = await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'alice')
          .set('Content-Type', 'application/json')
          .send('{"hotel_id": ')
          .expect(400);
        assert.equal(res.body.detail, 'the request body is not valid JSON');
        assert.deepEqual(await listOf('alice'), before);
      });

      it('answers 415 for a body that is not declared as JSON, and stores nothing', async () => {
        const before = await listOf('alice');
        for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
          const res = await api()
            .post(`${bookings}/`)
            .set('X-Travel-User', 'alice')
            .set('Content-Type', type)
            .send(JSON.stringify(valid))
            .expect(415);
          assert.equal(res.body.message, '415: Unsupported Media Type');
        }
        assert.deepEqual(await listOf('alice'), before);
      });

      it('answers 400 for a request without a body', async () => {
        const res = await api().post(`${bookings}/`).set('X-Travel-User', 'alice').expect(400);
        assert.equal(res.body.detail, 'a JSON request body is required');
      });

      it('answers 413 for a body over the limit', async () => {
        const res = await api()
          .post(`${bookings}/`)
          .set('X-Travel-User', 'alice')
          .send({ ...valid, padding: 'x'.repeat(20_000) })
          .expect(413);
        assert.equal(res.body.code, 413);
      });
    });

    describe('cancelling', () => {
      it('answers 200 with the booking, cancelled, which stays readable', async () => {
        const res = await api().delete(`${bookings}/${k.alice}`).set('X-Travel-User', 'alice').expect(200);
        assert.equal(res.body.id, k.alice);
        assert.equal(res.body.status, 'cancelled');
        assert.ok(!Number.isNaN(Date.parse(res.body.cancelled_at)));
        const read = await api().get(`${bookings}/${k.alice}`).set('X-Travel-User', 'alice').expect(200);
        assert.deepEqual(read.body, res.body);
        const cancelled = await api().get(`${bookings}/?status=cancelled`).set('X-Travel-User', 'alice').expect(200);
        assert.ok(cancelled.body.items.some((b: { id: string }) => b.id === k.alice));
      });

      it('answers 200 again, unchanged, when cancelling twice', async () => {
        const first = await api().delete(`${bookings}/${k.bob}`).set('X-Travel-User', 'bob').expect(200);
        const second = await api().delete(`${bookings}/${k.bob}`).set('X-Travel-User', 'bob').expect(200);
        assert.equal(second.body.status, 'cancelled');
        assert.deepEqual(second.body, first.body);
      });

      it('cancels a booking made just before', async () => {
        const made = await api().post(`${bookings}/`).set('X-Travel-User', 'carol').send(valid).expect(201);
        const res = await api().delete(`${bookings}/${made.body.id}`).set('X-Travel-User', 'carol').expect(200);
        assert.equal(res.body.status, 'cancelled');
        assert.equal(res.body.created_at, made.body.created_at);
      });

      it("answers 404 to a user cancelling another user's booking, and leaves it alone", async () => {
        const res = await api().delete(`${bookings}/${k.bob}`).set('X-Travel-User', 'alice').expect(404);
        assert.equal(res.body.message, '404: Not Found');
        const bob = await api().get(`${bookings}/${k.bob}`).set('X-Travel-User', 'bob').expect(200);
        assert.equal(bob.body.status, 'confirmed');
        assert.equal(bob.body.cancelled_at, undefined);
      });

      it('answers 404 for a malformed or unknown id', async () => {
        await api().delete(`${bookings}/not-a-uuid`).set('X-Travel-User', 'alice').expect(404);
        await api().delete(`${bookings}/${UNKNOWN_ID}`).set('X-Travel-User', 'alice').expect(404);
      });
    });
  });
}
