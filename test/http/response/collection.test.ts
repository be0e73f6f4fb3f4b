/**
 * @module test/http/response/collection
 * Collection queries: pagination, partial responses and filters, their
 * validation, and the page with its `next` link.
 */
import assert from 'node:assert/strict';
import Koa from 'koa';
import mount from 'koa-mount';
import type { ParsedUrlQuery } from 'node:querystring';
import request from 'supertest';
import {
  createServiceApp,
  DEFAULT_LIMIT,
  filterTypes,
  HttpError,
  matchesFilters,
  MAX_LIMIT,
  pageOf,
  parseItemQuery,
  parseListQuery,
  pickFields,
} from '../../../src/http';

const spec = { fields: ['id', 'colour', 'size'], filterable: ['colour', 'size'] };

/** The detail of the 400 that parsing `query` throws. */
function rejection(query: ParsedUrlQuery): string {
  try {
    parseListQuery(query, spec);
  } catch (err) {
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 400);
    return err.detail ?? '';
  }
  assert.fail('the query was accepted');
}

describe('http/response/collection', () => {
  describe('parseListQuery', () => {
    it('gives offset 0 and limit 20 by default', () => {
      assert.deepEqual(parseListQuery({}, spec), { offset: 0, limit: DEFAULT_LIMIT, fields: undefined, filters: {} });
      assert.equal(DEFAULT_LIMIT, 20);
    });

    it('reads offset and limit', () => {
      const q = parseListQuery({ offset: '40', limit: '7' }, spec);
      assert.equal(q.offset, 40);
      assert.equal(q.limit, 7);
    });

    it('caps limit at 100', () => {
      assert.equal(MAX_LIMIT, 100);
      assert.equal(parseListQuery({ limit: '101' }, spec).limit, 100);
      assert.equal(parseListQuery({ limit: '100000' }, spec).limit, 100);
    });

    it('caps a limit of any length at 100, as it caps 101', () => {
      assert.equal(parseListQuery({ limit: '99999999999999999999' }, spec).limit, 100);
      assert.equal(parseListQuery({ limit: '9'.repeat(400) }, spec).limit, 100);
    });

    for (const value of ['-1', '1.5', '', ' 5', '+5', '0x10', '1e2', 'ten']) {
      it(`refuses offset=${JSON.stringify(value)} and limit=${JSON.stringify(value)}, naming the argument`, () => {
        assert.equal(rejection({ offset: value }), 'offset must be a non-negative integer');
        assert.match(rejection({ limit: value }), /^limit must be a positive integer$/);
      });
    }

    it('refuses limit=0, which would page forever', () => {
      assert.equal(rejection({ limit: '0' }), 'limit must be a positive integer');
    });

    it('refuses numbers too large to be exact', () => {
      assert.equal(rejection({ offset: '99999999999999999999' }), 'offset is too large');
    });

    it('refuses an argument given twice', () => {
      assert.equal(rejection({ offset: ['1', '2'] }), 'offset must be given once');
      assert.equal(rejection({ fields: ['id', 'size'] }), 'fields must be given once');
      assert.equal(rejection({ colour: ['red', 'blue'] }), 'colour must be given once');
    });

    it('reads fields, trimming spaces', () => {
      assert.deepEqual(parseListQuery({ fields: 'id, size' }, spec).fields, ['id', 'size']);
    });

    it('refuses an unknown field, naming it and the known ones', () => {
      assert.equal(
        rejection({ fields: 'id,weight' }),
        "fields: unknown field 'weight'; known fields: id, colour, size",
      );
    });

    it('refuses empty field names', () => {
      assert.equal(rejection({ fields: '' }), 'fields must be a comma-separated list of field names');
      assert.equal(rejection({ fields: 'id,,size' }), 'fields must be a comma-separated list of field names');
    });

    it('reads the other arguments as equality filters', () => {
      assert.deepEqual(parseListQuery({ colour: 'red', size: '' }, spec).filters, { colour: 'red', size: '' });
    });

    it('refuses an argument that is not a filterable field, naming it', () => {
      assert.equal(rejection({ id: '1' }), "unknown query argument 'id'; filterable fields: colour, size");
      assert.equal(
        rejection({ __proto__x: '1' }),
        "unknown query argument '__proto__x'; filterable fields: colour, size",
      );
    });

    it('says nothing of filterable fields when there are none', () => {
      assert.throws(() => parseListQuery({ q: 'x' }, { fields: ['id'], filterable: [] }), {
        detail: "unknown query argument 'q'",
      });
    });
  });

  describe('typed filters', () => {
    const typed = {
      fields: ['id', 'size', 'owner', 'day', 'state', 'colour'],
      filterable: ['size', 'owner', 'day', 'state', 'colour'],
      filterTypes: {
        size: filterTypes.integer,
        owner: filterTypes.uuid,
        day: filterTypes.day,
        state: filterTypes.oneOf(['open', 'closed']),
      },
    };
    const refusal = (query: ParsedUrlQuery) => {
      try {
        parseListQuery(query, typed);
      } catch (err) {
        assert.ok(err instanceof HttpError);
        assert.equal(err.status, 400);
        return err.detail;
      }
      assert.fail('the query was accepted');
    };

    it('reads each value in the spelling the items use', () => {
      const query = {
        size: '04',
        owner: 'B1240207-0DF8-456D-9EE3-752904B6062B',
        day: '2026-02-28',
        state: 'open',
        colour: 'Red',
      };
      assert.deepEqual(parseListQuery(query, typed).filters, {
        size: '4',
        owner: 'b1240207-0df8-456d-9ee3-752904b6062b',
        day: '2026-02-28',
        state: 'open',
        colour: 'Red',
      });
    });

    for (const [query, detail] of [
      [{ size: 'large' }, 'size must be an integer'],
      [{ size: '4.5' }, 'size must be an integer'],
      [{ size: '' }, 'size must be an integer'],
      [{ size: '99999999999999999999' }, 'size must be an integer'],
      [{ owner: 'b1240207' }, 'owner must be a UUID'],
      [{ owner: '{b1240207-0df8-456d-9ee3-752904b6062b}' }, 'owner must be a UUID'],
      [{ day: '2026-02-30' }, 'day must be a date (YYYY-MM-DD)'],
      [{ day: '2026-2-3' }, 'day must be a date (YYYY-MM-DD)'],
      [{ state: 'Open' }, 'state must be one of open, closed'],
    ] as const) {
      it(`refuses ${JSON.stringify(query)} with a 400 saying what the value must be`, () => {
        assert.equal(refusal(query), detail);
      });
    }

    it('finds with a value spelled another way what the usual spelling finds', () => {
      const items = [{ id: '1', size: 4, owner: 'b1240207-0df8-456d-9ee3-752904b6062b' }];
      assert.ok(
        matchesFilters(
          items[0],
          parseListQuery({ size: '004', owner: 'B1240207-0DF8-456D-9EE3-752904B6062B' }, typed).filters,
        ),
      );
    });
  });

  describe('parseItemQuery', () => {
    it('reads fields', () => {
      assert.deepEqual(parseItemQuery({ fields: 'id' }, spec), { fields: ['id'] });
      assert.deepEqual(parseItemQuery({}, spec), { fields: undefined });
    });

    it('refuses paging, filters and unknown fields on an item', () => {
      assert.throws(() => parseItemQuery({ offset: '1' }, spec), {
        status: 400,
        detail: "unknown query argument 'offset'",
      });
      assert.throws(() => parseItemQuery({ colour: 'red' }, spec), {
        status: 400,
        detail: "unknown query argument 'colour'",
      });
      assert.throws(() => parseItemQuery({ fields: 'nope' }, spec), { status: 400, detail: /unknown field 'nope'/ });
    });
  });

  describe('pickFields and matchesFilters', () => {
    const item = { id: 7, colour: 'red', size: null as string | null };

    it('keeps only the named fields, in the order named', () => {
      assert.deepEqual(Object.keys(pickFields(item, ['colour', 'id'])), ['colour', 'id']);
      assert.equal(pickFields(item, undefined), item);
    });

    it('compares filters with the text of each value', () => {
      assert.ok(matchesFilters(item, { id: '7', colour: 'red' }));
      assert.ok(!matchesFilters(item, { colour: 'blue' }));
      assert.ok(!matchesFilters(item, { size: 'null' }));
      assert.ok(!matchesFilters(item, { weight: '1' }));
    });
  });

  describe('pageOf', () => {
    const things = Array.from({ length: 45 }, (_, i) => ({
      id: String(i + 1),
      colour: i % 3 === 0 ? 'red' : 'blue',
      size: 'M',
    }));

    function thingsApp(): Koa {
      const app = createServiceApp();
      app.use((ctx) => {
        ctx.body = pageOf(ctx, things, parseListQuery(ctx.query, spec));
      });
      return app;
    }

    it('answers the first 20 with a next link and a Link header', async () => {
      const res = await request(thingsApp().callback()).get('/things/').expect(200);
      assert.equal(res.body.items.length, 20);
      assert.deepEqual([res.body.offset, res.body.limit, res.body.total], [0, 20, 45]);
      assert.match(res.body.next, /^http:\/\/127\.0\.0\.1:\d+\/things\/\?offset=20&limit=20$/);
      assert.equal(res.headers.link, `<${res.body.next}>; rel="next"`);
    });

    it('keeps the other arguments in the next link', async () => {
      const res = await request(thingsApp().callback()).get('/things/?colour=blue&fields=id&limit=5').expect(200);
      assert.equal(res.body.total, 30);
      assert.deepEqual(res.body.items[0], { id: '2' });
      const next = new URL(res.body.next);
      assert.equal(next.searchParams.get('colour'), 'blue');
      assert.equal(next.searchParams.get('fields'), 'id');
      assert.equal(next.searchParams.get('offset'), '5');
      assert.equal(next.searchParams.get('limit'), '5');
    });

    it('writes the capped limit into the next link', async () => {
      const many = createServiceApp();
      const lots = Array.from({ length: 250 }, (_, i) => ({ id: String(i) }));
      many.use((ctx) => {
        ctx.body = pageOf(ctx, lots, parseListQuery(ctx.query, { fields: ['id'], filterable: [] }));
      });
      const res = await request(many.callback()).get('/?limit=1000').expect(200);
      assert.equal(res.body.items.length, 100);
      assert.equal(new URL(res.body.next).searchParams.get('limit'), '100');
    });

    it('has no next link on the last page', async () => {
      const res = await request(thingsApp().callback()).get('/things/?offset=40').expect(200);
      assert.equal(res.body.items.length, 5);
      assert.equal(res.body.next, undefined);
      assert.equal(res.headers.link, undefined);
    });

    it('has no next link when the page ends exactly at the end', async () => {
      const res = await request(thingsApp().callback()).get('/things/?offset=25&limit=20').expect(200);
      assert.equal(res.body.items.length, 20);
      assert.equal(res.body.next, undefined);
    });

    it('answers an empty page past the end', async () => {
      const res = await request(thingsApp().callback()).get('/things/?offset=1000').expect(200);
      assert.deepEqual(res.body, { items: [], offset: 1000, limit: 20, total: 45 });
    });

    it('puts the mount prefixes in front of the next link', async () => {
      const host = new Koa();
      const outer = new Koa();
      outer.use(mount('/v9', thingsApp()));
      host.use(mount('/host', outer));
      const res = await request(host.callback()).get('/host/v9/things/?limit=10').expect(200);
      assert.match(res.body.next, /^http:\/\/127\.0\.0\.1:\d+\/host\/v9\/things\/\?limit=10&offset=10$/);
    });

    it('answers 400 through the error handler for a bad argument', async () => {
      const res = await request(thingsApp().callback()).get('/things/?limit=-3').expect(400);
      assert.deepEqual(res.body, {
        code: 400,
        message: '400: Bad Request',
        detail: 'limit must be a positive integer',
      });
    });
  });
});
