/**
 * @module test/bookings/app
 * A booking service alone, for both kinds from the one implementation: the
 * catalogue, reading and listing bookings, ownership, canonical slashes and
 * the errors of the shared conventions.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { parseBookingData } from '../../src/bookings';
import { demoModule, KIND_CASES, UNKNOWN_ID } from '../support/bookings';
import { serve, type Served } from '../support/server';

const JSON_TYPE = 'application/json; charset=utf-8';

for (const k of KIND_CASES) {
  const bookings = `${k.base}/bookings`;

  describe(`bookings/app (${k.kind})`, () => {
    let served: Served;
    before(async () => {
      served = await serve(demoModule(k.kind).app);
    });
    after(() => served.close());
    const api = () => request(served.server);

    describe('the catalogue', () => {
      it(`answers ${k.base} with 200 and the catalogue, without redirecting`, async () => {
        const res = await api().get(k.base).expect(200).expect('Content-Type', JSON_TYPE);
        assert.equal(res.body.total, k.catalogueSize);
        assert.equal(res.body.items.length, k.catalogueSize);
        const first = res.body.items[0];
        assert.match(first.id, /^[0-9a-f-]{36}$/);
        assert.equal(typeof first.city, 'string');
        assert.equal(first.url, `${served.origin}${k.base}/${first.id}`);
        assert.equal(res.headers['content-location'], `${served.origin}${k.base}/`);
      });

      it(`answers ${k.base}/ with the same list`, async () => {
        const [slashless, canonical] = await Promise.all([
          api().get(k.base).expect(200),
          api().get(`${k.base}/`).expect(200),
        ]);
        assert.deepEqual(canonical.body, slashless.body);
        assert.equal(canonical.headers['content-location'], undefined);
      });

      it('names the item of each entry: name for hotels, model for cars', async () => {
        const res = await api().get(`${k.base}/`).expect(200);
        const name = k.kind === 'hotel' ? 'name' : 'model';
        for (const item of res.body.items) assert.equal(typeof item[name], 'string');
      });

      it('filters by city', async () => {
        const res = await api().get(`${k.base}/?city=Oslo`).expect(200);
        assert.ok(res.body.total >= 1);
        for (const item of res.body.items) assert.equal(item.city, 'Oslo');
        const none = await api().get(`${k.base}/?city=Atlantis`).expect(200);
        assert.deepEqual(none.body.items, []);
      });

      it('pages with offset, limit and a next link', async () => {
        const res = await api().get(`${k.base}/?limit=2`).expect(200);
        assert.equal(res.body.items.length, 2);
        assert.equal(res.body.next, `${served.origin}${k.base}/?limit=2&offset=2`);
        assert.equal(res.headers.link, `<${res.body.next}>; rel="next"`);
        const rest = await api().get(`${k.base}/?limit=2&offset=2`).expect(200);
        assert.equal(rest.body.items.length, k.catalogueSize - 2);
        assert.equal(rest.body.next, undefined);
      });

      it('filters by a number whatever its spelling, and answers 400 for a value that is no number', async () => {
        const number = k.kind === 'hotel' ? 'stars' : 'seats';
        const all = await api().get(`${k.base}/`).expect(200);
        const value = all.body.items[0][number] as number;
        const res = await api().get(`${k.base}/?${number}=0${value}`).expect(200);
        assert.ok(res.body.total >= 1);
        for (const item of res.body.items) assert.equal(item[number], value);
        const range = k.kind === 'hotel' ? 'from 1 to 5' : 'from 1 to 9';
        const bad = await api().get(`${k.base}/?${number}=many`).expect(400).expect('Content-Type', JSON_TYPE);
        assert.deepEqual(bad.body, {
          code: 400,
          message: '400: Bad Request',
          detail: `${number} must be an integer ${range}`,
        });
      });

      it('answers an integer too large for a number, or out of the range the field holds, with a 400 giving the range', async () => {
        const number = k.kind === 'hotel' ? 'stars' : 'seats';
        const range = k.kind === 'hotel' ? 'from 1 to 5' : 'from 1 to 9';
        for (const value of ['99999999999999999999', '9007199254740993', '-1', '0', '10', '-99999999999999999999']) {
          const res = await api().get(`${k.base}/?${number}=${value}`).expect(400).expect('Content-Type', JSON_TYPE);
          assert.deepEqual(
            res.body,
            { code: 400, message: '400: Bad Request', detail: `${number} must be an integer ${range}` },
            value,
          );
        }
      });

      it('keeps only the fields asked for', async () => {
        const res = await api().get(`${k.base}/?fields=id,city`).expect(200);
        for (const item of res.body.items) assert.deepEqual(Object.keys(item), ['id', 'city']);
      });

      it('answers 400 for an unknown field, filter or a bad limit', async () => {
        const field = await api().get(`${k.base}/?fields=price`).expect(400);
        assert.match(field.body.detail, /unknown field 'price'/);
        const filter = await api().get(`${k.base}/?colour=red`).expect(400);
        assert.match(filter.body.detail, /unknown query argument 'colour'/);
        await api().get(`${k.base}/?limit=-1`).expect(400);
      });

      it('answers one entry at its url', async () => {
        const res = await api().get(`${k.base}/${k.item}`).expect(200);
        assert.equal(res.body.id, k.item);
        assert.equal(res.body.url, `${served.origin}${k.base}/${k.item}`);
        const trimmed = await api().get(`${k.base}/${k.item}?fields=city`).expect(200);
        assert.deepEqual(Object.keys(trimmed.body), ['city']);
      });

      it('answers 404 for an unknown or malformed entry id, and for an entry with a trailing slash', async () => {
        await api().get(`${k.base}/${UNKNOWN_ID}`).expect(404);
        const malformed = await api().get(`${k.base}/not-a-uuid`).expect(404).expect('Content-Type', JSON_TYPE);
        assert.equal(malformed.body.code, 404);
        assert.equal(malformed.body.message, '404: Not Found');
        await api().get(`${k.base}/${k.item}/`).expect(404);
      });

      it('needs no user: the catalogue is the same for everybody', async () => {
        const res = await api().get(`${k.base}/`).set('X-Travel-User', 'bob').expect(200);
        assert.equal(res.body.total, k.catalogueSize);
      });
    });

    describe('reading a booking', () => {
      it('answers the owner with 200 and the booking', async () => {
        const res = await api()
          .get(`${bookings}/${k.alice}`)
          .set('X-Travel-User', 'alice')
          .expect(200)
          .expect('Content-Type', JSON_TYPE);
        assert.equal(res.body.id, k.alice);
        assert.equal(res.body[k.itemField], k.item);
        assert.equal(res.body.status, 'confirmed');
        assert.equal(res.body.user, 'alice');
        assert.match(res.body[k.startField], /^\d{4}-\d{2}-\d{2}$/);
        assert.equal(typeof res.body[k.lengthField], 'number');
        assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
        assert.equal(res.body.url, `${served.origin}${bookings}/${k.alice}`);
        assert.equal(res.headers.vary, 'Accept');
      });

      it('keeps only the fields asked for, and refuses other query arguments', async () => {
        const res = await api()
          .get(`${bookings}/${k.alice}?fields=id,status`)
          .set('X-Travel-User', 'alice')
          .expect(200);
        assert.deepEqual(res.body, { id: k.alice, status: 'confirmed' });
        await api().get(`${bookings}/${k.alice}?fields=secret`).set('X-Travel-User', 'alice').expect(400);
        await api().get(`${bookings}/${k.alice}?status=confirmed`).set('X-Travel-User', 'alice').expect(400);
      });

      it('finds a booking whatever the case of its id', async () => {
        const res = await api().get(`${bookings}/${k.alice.toUpperCase()}`).set('X-Travel-User', 'alice').expect(200);
        assert.equal(res.body.id, k.alice);
      });

      it("answers 404 for another user's booking, as if it did not exist", async () => {
        const theirs = await api().get(`${bookings}/${k.bob}`).set('X-Travel-User', 'alice').expect(404);
        const missing = await api().get(`${bookings}/${UNKNOWN_ID}`).set('X-Travel-User', 'alice').expect(404);
        assert.equal(theirs.body.code, 404);
        assert.deepEqual(Object.keys(theirs.body), Object.keys(missing.body));
        await api().get(`${bookings}/${k.bob}`).set('X-Travel-User', 'bob').expect(200);
      });

      it('answers 404 with the error body for a malformed id', async () => {
        for (const id of ['42', 'not-a-uuid', `${k.alice}x`, `${k.alice.slice(0, -1)}g`]) {
          const res = await api()
            .get(`${bookings}/${id}`)
            .set('X-Travel-User', 'alice')
            .expect(404)
            .expect('Content-Type', JSON_TYPE);
          assert.equal(res.body.message, '404: Not Found');
        }
      });

      it('answers 404 for a booking path with a trailing slash', async () => {
        await api().get(`${bookings}/${k.alice}/`).set('X-Travel-User', 'alice').expect(404);
      });

      it('reads X-Travel-User as the UTF-8 bytes the auth service writes a name in', async () => {
        // What the auth service sends for Łukasz: the name's UTF-8 bytes, one latin1 character each.
        const lukasz = Buffer.from('Łukasz', 'utf8').toString('latin1');
        // fetch, not supertest: Node's http client writes headers sent with a string body in UTF-8, not byte for byte.
        const res = await fetch(`${served.origin}${bookings}/`, {
          method: 'POST',
          headers: { 'X-Travel-User': lukasz, 'Content-Type': 'application/json' },
          body: JSON.stringify({ [k.itemField]: k.item, [k.startField]: '2099-01-01' }),
        });
        assert.equal(res.status, 201);
        const made = { body: (await res.json()) as { id: string; user: string } };
        assert.equal(made.body.user, 'Łukasz');
        const read = await api().get(`${bookings}/${made.body.id}`).set('X-Travel-User', lukasz).expect(200);
        assert.equal(read.body.user, 'Łukasz');
        const seeded = demoModule(k.kind, {
          data: parseBookingData(
            `${k.catalogueKey}:\n  - ${k.catalogueEntry}\n${k.bookingsKey}:\n  - {id: ${UNKNOWN_ID}, user: Łukasz, ${k.itemField}: ${k.item}, ${k.startField}: 2026-06-12, ${k.lengthField}: 1, created_at: "2026-01-15T09:30:00Z"}\n`,
          ),
        });
        const fromFile = await request(seeded.app.callback())
          .get(`${bookings}/${UNKNOWN_ID}`)
          .set('X-Travel-User', lukasz)
          .expect(200);
        assert.equal(fromFile.body.user, 'Łukasz');
      });

      it('answers 400 for an X-Travel-User that is not UTF-8, rather than taking it for another name', async () => {
        const res = await api()
          .get(`${bookings}/`)
          .set('X-Travel-User', '\xff\xfe')
          .expect(400)
          .expect('Content-Type', JSON_TYPE);
        assert.deepEqual(res.body, {
          code: 400,
          message: '400: Bad Request',
          detail: 'X-Travel-User must be a user name in UTF-8',
        });
      });

      it('answers 401 with the error body without X-Travel-User', async () => {
        for (const res of [
          await api().get(`${bookings}/${k.alice}`).expect(401),
          await api().get(`${bookings}/${k.alice}`).set('X-Travel-User', '  ').expect(401),
          await api().get(`${bookings}/`).expect(401),
          await api().delete(`${bookings}/${k.alice}`).expect(401),
          await api()
            .post(`${bookings}/`)
            .send({ [k.itemField]: k.item })
            .expect(401),
        ]) {
          assert.equal(res.body.code, 401);
          assert.equal(res.body.message, '401: Unauthorized');
          assert.equal(res.headers['www-authenticate'], undefined);
        }
      });
    });

    describe('listing bookings', () => {
      it("lists only the caller's own bookings", async () => {
        const alice = await api().get(`${bookings}/`).set('X-Travel-User', 'alice').expect(200);
        const bob = await api().get(`${bookings}/`).set('X-Travel-User', 'bob').expect(200);
        assert.ok(alice.body.items.some((b: { id: string }) => b.id === k.alice));
        assert.ok(alice.body.items.every((b: { user: string }) => b.user === 'alice'));
        assert.deepEqual(
          bob.body.items.map((b: { id: string }) => b.id),
          [k.bob],
        );
        assert.equal(bob.body.total, 1);
      });

      it('gives a user without bookings an empty list', async () => {
        const res = await api().get(`${bookings}/`).set('X-Travel-User', 'carol').expect(200);
        assert.deepEqual(res.body, { items: [], offset: 0, limit: 20, total: 0 });
      });

      it(`filters by status and by ${k.itemField}`, async () => {
        const confirmed = await api().get(`${bookings}/?status=confirmed`).set('X-Travel-User', 'alice').expect(200);
        assert.ok(confirmed.body.total >= 1);
        for (const b of confirmed.body.items) assert.equal(b.status, 'confirmed');
        const byItem = await api()
          .get(`${bookings}/?${k.itemField}=${k.item}`)
          .set('X-Travel-User', 'alice')
          .expect(200);
        assert.deepEqual(
          byItem.body.items.map((b: { id: string }) => b.id),
          [k.alice],
        );
        const other = await api()
          .get(`${bookings}/?${k.itemField}=${k.otherItem}`)
          .set('X-Travel-User', 'alice')
          .expect(200);
        assert.equal(other.body.total, 0);
      });

      it(`finds by ${k.itemField} in upper case, as it finds a booking by its id in upper case`, async () => {
        const res = await api()
          .get(`${bookings}/?${k.itemField}=${k.item.toUpperCase()}`)
          .set('X-Travel-User', 'alice')
          .expect(200);
        assert.deepEqual(
          res.body.items.map((b: { id: string }) => b.id),
          [k.alice],
        );
      });

      for (const [query, detail] of [
        ['status=booked', 'status must be one of confirmed, cancelled'],
        [`${k.itemField}=42`, `${k.itemField} must be a UUID`],
        [`${k.startField}=tomorrow`, `${k.startField} must be a date (YYYY-MM-DD)`],
      ]) {
        it(`answers 400 for ?${query}, a value no booking can have, rather than an empty list`, async () => {
          const res = await api()
            .get(`${bookings}/?${query}`)
            .set('X-Travel-User', 'alice')
            .expect(400)
            .expect('Content-Type', JSON_TYPE);
          assert.deepEqual(res.body, { code: 400, message: '400: Bad Request', detail });
        });
      }

      it('keeps only the fields asked for, and refuses unknown ones', async () => {
        const res = await api().get(`${bookings}/?fields=id,status`).set('X-Travel-User', 'bob').expect(200);
        assert.deepEqual(res.body.items, [{ id: k.bob, status: 'confirmed' }]);
        const bad = await api().get(`${bookings}/?fields=id,password`).set('X-Travel-User', 'bob').expect(400);
        assert.match(bad.body.detail, /unknown field 'password'/);
        await api().get(`${bookings}/?user=bob`).set('X-Travel-User', 'alice').expect(400);
      });

      it('redirects the slashless path with 301, keeping the query', async () => {
        const res = await api().get(`${bookings}?status=confirmed`).set('X-Travel-User', 'alice').expect(301);
        assert.equal(res.headers.location, `${bookings}/?status=confirmed`);
      });

      it('redirects a POST to the slashless path with 308, so the body is sent again', async () => {
        const res = await api()
          .post(bookings)
          .set('X-Travel-User', 'alice')
          .send({ [k.itemField]: k.item })
          .expect(308);
        assert.equal(res.headers.location, `${bookings}/`);
      });
    });

    describe('errors of the conventions', () => {
      it('answers 405 with Allow for a method a path does not have', async () => {
        const list = await api().put(`${bookings}/`).set('X-Travel-User', 'alice').expect(405);
        assert.deepEqual(list.headers.allow.split(/,\s*/).sort(), ['GET', 'HEAD', 'POST']);
        assert.equal(list.body.message, '405: Method Not Allowed');
        const one = await api().patch(`${bookings}/${k.alice}`).set('X-Travel-User', 'alice').expect(405);
        assert.deepEqual(one.headers.allow.split(/,\s*/).sort(), ['DELETE', 'GET', 'HEAD']);
        const catalogue = await api().post(`${k.base}/`).expect(405);
        assert.deepEqual(catalogue.headers.allow.split(/,\s*/).sort(), ['GET', 'HEAD']);
      });

      it('answers 406 with the supported types for an Accept it cannot meet', async () => {
        const res = await api()
          .get(`${bookings}/${k.alice}`)
          .set('X-Travel-User', 'alice')
          .set('Accept', 'text/csv')
          .expect(406);
        assert.equal(res.headers['content-type'], JSON_TYPE);
        assert.match(res.body.detail, /application\/json/);
      });

      it('answers in XML when asked', async () => {
        const res = await api()
          .get(`${bookings}/${k.alice}`)
          .set('X-Travel-User', 'alice')
          .set('Accept', 'application/xml')
          .expect(200);
        assert.match(res.headers['content-type'], /^application\/xml/);
        assert.match(res.text, new RegExp(`<${k.itemField}>${k.item}</${k.itemField}>`));
      });

      it('answers 404 with the error body for a path it does not know', async () => {
        const res = await api().get(`${k.base}/bookings/${k.alice}/extras/`).set('X-Travel-User', 'alice').expect(404);
        assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
      });

      it('answers 404 for a path spelled in another case, which a Mapping of the right case would not have routed', async () => {
        for (const path of [`${k.base}/Bookings/${k.alice}`, `${k.base}/BOOKINGS/`]) {
          const res = await api().get(path).set('X-Travel-User', 'alice').expect(404);
          assert.deepEqual(res.body, { code: 404, message: '404: Not Found' }, path);
        }
        await api()
          .post(`${k.base}/Bookings/`)
          .set('X-Travel-User', 'alice')
          .send({ [k.itemField]: k.item })
          .expect(404);
      });

      it('answers 404, not 501 with an empty Allow, to a method no route takes on a path it does not know', async () => {
        const res = await api()
          .trace(`${k.base}/bookings/${k.alice}/extras/`)
          .set('X-Travel-User', 'alice')
          .expect(404);
        assert.equal(res.headers.allow, undefined);
        assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
      });
    });
  });
}
