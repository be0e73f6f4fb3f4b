/**
 * @module test/api/messages
 * The message resources in both versions, through the dispatcher: items,
 * collections, pagination, fields, filters, slashes, methods, negotiation.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { createApiApp } from '../../src/api';

const HOST = 'api.test';
const JSON_TYPE = 'application/json; charset=utf-8';
const V1_FIELDS = ['id', 'account_id', 'content', 'url'];

describe('api/messages', () => {
  const server = createApiApp().callback();
  const get = (path: string) => request(server).get(path).set('Host', HOST);

  for (const v of ['v1', 'v2']) {
    describe(`in ${v}`, () => {
      describe(`GET /${v}/messages/<id>`, () => {
        it('answers 200 with the message and its absolute url', async () => {
          const res = await get(`/${v}/messages/1`)
            .expect(200)
            .expect('Content-Type', JSON_TYPE)
            .expect('Vary', 'Accept');
          assert.equal(res.body.id, '1');
          assert.equal(res.body.account_id, '1');
          assert.equal(typeof res.body.content, 'string');
          assert.equal(res.body.url, `http://${HOST}/${v}/messages/1`);
        });

        it('answers HEAD with 200 and no body', async () => {
          const res = await request(server).head(`/${v}/messages/7`).expect(200).expect('Content-Type', JSON_TYPE);
          assert.deepEqual(res.body, {});
        });

        for (const id of ['46', '0', '01', '1.0', 'abc', '%20', '1%2F']) {
          it(`answers 404 with the error body for the id ${JSON.stringify(id)}`, async () => {
            const res = await get(`/${v}/messages/${id}`)
              .expect(404)
              .expect('Content-Type', JSON_TYPE)
              .expect('Vary', 'Accept');
            assert.deepEqual(res.body, { code: 404, message: '404: Not Found', detail: 'no message has this id' });
          });
        }

        it('answers 404 for the item path with a trailing slash', async () => {
          const res = await get(`/${v}/messages/1/`).expect(404).expect('Content-Type', JSON_TYPE);
          assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
        });

        it('answers 404 for the path spelled in another case, as the gateway matches prefixes by case', async () => {
          for (const path of [
            `/${v}/Messages/1`,
            `/${v}/MESSAGES/`,
            `/${v}/Accounts/1/messages/`,
            `/${v}/accounts/1/Messages/`,
          ]) {
            const res = await get(path).expect(404).expect('Content-Type', JSON_TYPE);
            assert.deepEqual(res.body, { code: 404, message: '404: Not Found' }, path);
          }
          await get(`/${v}/Messages`).expect(404);
        });

        it('answers a method no route takes (TRACE) with 405 and Allow on the item, as any method the path does not serve', async () => {
          const res = await request(server).trace(`/${v}/messages/1`).expect(405).expect('Allow', 'HEAD, GET');
          assert.deepEqual(res.body, { code: 405, message: '405: Method Not Allowed' });
        });

        it('answers that method on a path it does not know with 404 and no Allow, as any other method', async () => {
          const res = await request(server).trace(`/${v}/nothing`).expect(404).expect('Content-Type', JSON_TYPE);
          assert.equal(res.headers.allow, undefined);
          assert.deepEqual(res.body, { code: 404, message: '404: Not Found' });
        });

        for (const method of ['post', 'put', 'patch', 'delete'] as const) {
          it(`answers ${method.toUpperCase()} with 405 and Allow`, async () => {
            const res = await request(server)
              [method](`/${v}/messages/1`)
              .expect(405)
              .expect('Allow', 'HEAD, GET')
              .expect('Content-Type', JSON_TYPE);
            assert.deepEqual(res.body, { code: 405, message: '405: Method Not Allowed' });
          });
        }

        it('answers only the fields asked for', async () => {
          const res = await get(`/${v}/messages/3?fields=content,id`).expect(200);
          assert.deepEqual(Object.keys(res.body), ['content', 'id']);
        });

        it('answers 400 naming an unknown field', async () => {
          const res = await get(`/${v}/messages/3?fields=id,colour`).expect(400).expect('Content-Type', JSON_TYPE);
          assert.equal(res.body.code, 400);
          assert.equal(res.body.message, '400: Bad Request');
          assert.match(res.body.detail, /unknown field 'colour'/);
        });

        it('answers 400 naming an argument an item does not take', async () => {
          const res = await get(`/${v}/messages/3?limit=5`).expect(400);
          assert.equal(res.body.detail, "unknown query argument 'limit'");
        });

        it('answers in XML when asked, and 404s in XML too', async () => {
          const ok = await get(`/${v}/messages/1`)
            .set('Accept', 'application/xml')
            .expect(200)
            .expect('Content-Type', 'application/xml')
            .expect('Vary', 'Accept');
          assert.match(
            ok.text,
            /^<\?xml version="1.0" encoding="UTF-8"\?>\n<response><id>1<\/id><account_id>1<\/account_id><content>/,
          );
          assert.ok(ok.text.includes(`<url>http://${HOST}/${v}/messages/1</url>`));
          const missing = await get(`/${v}/messages/99`)
            .set('Accept', 'application/xml')
            .expect(404)
            .expect('Content-Type', 'application/xml');
          assert.match(
            missing.text,
            /<response><code>404<\/code><message>404: Not Found<\/message><detail>no message has this id<\/detail><\/response>$/,
          );
        });

        it('answers 406 listing the supported types, in JSON', async () => {
          const res = await get(`/${v}/messages/1`)
            .set('Accept', 'text/html')
            .expect(406)
            .expect('Content-Type', JSON_TYPE)
            .expect('Vary', 'Accept');
          assert.deepEqual(res.body, {
            code: 406,
            message: '406: Not Acceptable',
            detail: 'supported types: application/json, application/xml',
          });
        });

        it('answers JSON for */* and for JSON listed first', async () => {
          await get(`/${v}/messages/1`).set('Accept', '*/*').expect(200).expect('Content-Type', JSON_TYPE);
          await get(`/${v}/messages/1`)
            .set('Accept', 'application/json, application/xml')
            .expect(200)
            .expect('Content-Type', JSON_TYPE);
        });

        it('answers JSON for an Accept that names the charset it is written in', async () => {
          const res = await get(`/${v}/messages/1`)
            .set('Accept', 'application/json; charset=utf-8')
            .expect(200)
            .expect('Content-Type', JSON_TYPE);
          assert.equal(res.body.id, '1');
        });
      });

      describe(`GET /${v}/messages/`, () => {
        it('answers the first 20 of 45 with a next link and a Link header', async () => {
          const res = await get(`/${v}/messages/`)
            .expect(200)
            .expect('Content-Type', JSON_TYPE)
            .expect('Vary', 'Accept');
          assert.deepEqual([res.body.offset, res.body.limit, res.body.total, res.body.items.length], [0, 20, 45, 20]);
          assert.deepEqual(
            res.body.items.map((m: { id: string }) => m.id),
            Array.from({ length: 20 }, (_, i) => String(i + 1)),
          );
          assert.equal(res.body.next, `http://${HOST}/${v}/messages/?offset=20&limit=20`);
          assert.equal(res.headers.link, `<http://${HOST}/${v}/messages/?offset=20&limit=20>; rel="next"`);
        });

        it('follows next links to the end, where there is none', async () => {
          const seen: string[] = [];
          let path: string | undefined = `/${v}/messages/?limit=15`;
          let pages = 0;
          while (path) {
            const res: request.Response = await get(path).expect(200);
            seen.push(...res.body.items.map((m: { id: string }) => m.id));
            path = res.body.next ? new URL(res.body.next).pathname + new URL(res.body.next).search : undefined;
            if (!path) assert.equal(res.headers.link, undefined);
            pages++;
          }
          assert.equal(pages, 3);
          assert.equal(seen.length, 45);
          assert.equal(new Set(seen).size, 45);
        });

        it('caps limit at 100', async () => {
          const res = await get(`/${v}/messages/?limit=1000`).expect(200);
          assert.equal(res.body.limit, 100);
          assert.equal(res.body.items.length, 45);
          assert.equal(res.body.next, undefined);
        });

        for (const [query, detail] of [
          ['offset=-1', 'offset must be a non-negative integer'],
          ['offset=1.5', 'offset must be a non-negative integer'],
          ['offset=', 'offset must be a non-negative integer'],
          ['limit=-5', 'limit must be a positive integer'],
          ['limit=2.5', 'limit must be a positive integer'],
          ['limit=', 'limit must be a positive integer'],
          ['limit=0', 'limit must be a positive integer'],
          ['limit=1&limit=2', 'limit must be given once'],
          ['fields=id,nope', /^fields: unknown field 'nope'/],
          ['colour=red', /^unknown query argument 'colour'; filterable fields: account_id/],
          ['content=hi', /^unknown query argument 'content'/],
        ] as const) {
          it(`answers 400 for ?${query}, naming the argument`, async () => {
            const res = await get(`/${v}/messages/?${query}`).expect(400).expect('Content-Type', JSON_TYPE);
            assert.equal(res.body.message, '400: Bad Request');
            if (typeof detail === 'string') assert.equal(res.body.detail, detail);
            else assert.match(res.body.detail, detail);
          });
        }

        it('filters by account_id and keeps the filter in the next link', async () => {
          const res = await get(`/${v}/messages/?account_id=1&limit=10`).expect(200);
          assert.equal(res.body.total, 25);
          assert.ok(res.body.items.every((m: { account_id: string }) => m.account_id === '1'));
          const next = new URL(res.body.next);
          assert.deepEqual(Object.fromEntries(next.searchParams), { account_id: '1', limit: '10', offset: '10' });
        });

        it('answers an empty page for a filter nothing matches', async () => {
          const res = await get(`/${v}/messages/?account_id=9`).expect(200);
          assert.deepEqual(res.body, { items: [], offset: 0, limit: 20, total: 0 });
        });

        it('answers only the fields asked for in each item', async () => {
          const res = await get(`/${v}/messages/?fields=id&limit=3`).expect(200);
          assert.deepEqual(res.body.items, [{ id: '1' }, { id: '2' }, { id: '3' }]);
          assert.match(res.body.next, /fields=id/);
        });

        it('redirects the slashless path with 301 for GET and HEAD, keeping the query', async () => {
          await get(`/${v}/messages?offset=20`).expect(301).expect('Location', `/${v}/messages/?offset=20`);
          await request(server).head(`/${v}/messages`).expect(301).expect('Location', `/${v}/messages/`);
        });

        it('redirects the slashless path with 308 for POST', async () => {
          await request(server).post(`/${v}/messages`).send({}).expect(308).expect('Location', `/${v}/messages/`);
        });

        it('answers POST on the collection with 405 and Allow', async () => {
          const res = await request(server).post(`/${v}/messages/`).send({}).expect(405).expect('Allow', 'HEAD, GET');
          assert.equal(res.body.code, 405);
        });

        it('answers a collection in XML', async () => {
          const res = await get(`/${v}/messages/?limit=2&fields=id`)
            .set('Accept', 'application/xml')
            .expect(200)
            .expect('Content-Type', 'application/xml');
          assert.match(
            res.text,
            /<items><item><id>1<\/id><\/item><item><id>2<\/id><\/item><\/items><offset>0<\/offset><limit>2<\/limit><total>45<\/total><next>/,
          );
          assert.ok(res.headers.link);
        });
      });

      describe(`GET /${v}/accounts/<id>/messages/`, () => {
        it('answers the messages of the account, paged', async () => {
          const res = await get(`/${v}/accounts/1/messages/`).expect(200);
          assert.equal(res.body.total, 25);
          assert.ok(res.body.items.every((m: { account_id: string }) => m.account_id === '1'));
          assert.equal(res.body.next, `http://${HOST}/${v}/accounts/1/messages/?offset=20&limit=20`);
          const last = await get(`/${v}/accounts/1/messages/?offset=20`).expect(200);
          assert.equal(last.body.items.length, 5);
          assert.equal(last.body.next, undefined);
        });

        it('answers every message of a small account on one page', async () => {
          const res = await get(`/${v}/accounts/2/messages/`).expect(200);
          assert.deepEqual([res.body.total, res.body.items.length, res.body.next], [10, 10, undefined]);
          assert.equal(res.body.items[0].url, `http://${HOST}/${v}/messages/2`);
        });

        it('answers 404 for an unknown account', async () => {
          for (const id of ['4', '0', 'alice']) {
            const res = await get(`/${v}/accounts/${id}/messages/`).expect(404);
            assert.deepEqual(res.body, { code: 404, message: '404: Not Found', detail: 'no account has this id' });
          }
        });

        it('redirects the slashless path, keeping the query', async () => {
          await get(`/${v}/accounts/3/messages?limit=2`)
            .expect(301)
            .expect('Location', `/${v}/accounts/3/messages/?limit=2`);
          await request(server)
            .delete(`/${v}/accounts/3/messages`)
            .expect(308)
            .expect('Location', `/${v}/accounts/3/messages/`);
        });

        it('answers 400 for a bad argument', async () => {
          const res = await get(`/${v}/accounts/1/messages/?offset=x`).expect(400);
          assert.equal(res.body.detail, 'offset must be a non-negative integer');
        });
      });
    });
  }

  describe('the difference between v1 and v2', () => {
    it('gives the same message id different content', async () => {
      const one = await get('/v1/messages/1').expect(200);
      const two = await get('/v2/messages/1').expect(200);
      assert.equal(one.body.content, 'Welcome to Gatehouse, Alice.');
      assert.equal(two.body.content, 'Welcome to **Gatehouse**, Alice.');
    });

    it('gives every message different content in v1 and v2', async () => {
      const one = await get('/v1/messages/?limit=100').expect(200);
      const two = await get('/v2/messages/?limit=100').expect(200);
      for (let i = 0; i < 45; i++) {
        assert.equal(one.body.items[i].id, two.body.items[i].id);
        assert.notEqual(one.body.items[i].content, two.body.items[i].content);
      }
    });

    it('has v1 send exactly id, account_id, content and url', async () => {
      const res = await get('/v1/messages/2').expect(200);
      assert.deepEqual(res.body, {
        id: '2',
        account_id: '2',
        content: 'Your hotel booking is confirmed.',
        url: `http://${HOST}/v1/messages/2`,
      });
    });

    it('has v2 keep every v1 field by name and add more', async () => {
      const res = await get('/v2/messages/3').expect(200);
      for (const field of V1_FIELDS) assert.ok(field in res.body, field);
      assert.deepEqual(res.body, {
        id: '3',
        account_id: '1',
        content: 'Votre réservation est *confirmée*.',
        content_type: 'text/markdown',
        language: 'fr',
        created_at: '2025-01-06T11:00:00.000Z',
        url: `http://${HOST}/v2/messages/3`,
        account_url: `http://${HOST}/v2/accounts/1`,
      });
    });

    it('filters by language in v2 only', async () => {
      const res = await get('/v2/messages/?language=fr').expect(200);
      assert.ok(res.body.total > 0);
      assert.ok(res.body.items.every((m: { language: string }) => m.language === 'fr'));
      const v1 = await get('/v1/messages/?language=fr').expect(400);
      assert.equal(v1.body.detail, "unknown query argument 'language'; filterable fields: account_id");
    });

    it('lets v2 fields be selected, and not in v1', async () => {
      const res = await get('/v2/messages/1?fields=language,created_at').expect(200);
      assert.deepEqual(res.body, { language: 'en', created_at: '2025-01-06T09:00:00.000Z' });
      await get('/v1/messages/1?fields=language').expect(400);
    });
  });
});
