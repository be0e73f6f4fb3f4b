/**
 * @module test/api/accounts
 * The account resources in both versions.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { createApiApp } from '../../src/api';

const HOST = 'api.test';

describe('api/accounts', () => {
  const server = createApiApp().callback();
  const get = (path: string) => request(server).get(path).set('Host', HOST);

  for (const v of ['v1', 'v2']) {
    describe(`in ${v}`, () => {
      it('lists the three accounts', async () => {
        const res = await get(`/${v}/accounts/`).expect(200).expect('Vary', 'Accept');
        assert.deepEqual([res.body.total, res.body.next], [3, undefined]);
        assert.deepEqual(res.body.items[0], {
          id: '1',
          name: 'Alice',
          created_at: '2025-01-02T08:00:00.000Z',
          url: `http://${HOST}/${v}/accounts/1`,
          messages_url: `http://${HOST}/${v}/accounts/1/messages/`,
        });
      });

      it('pages, trims and filters the list', async () => {
        const page = await get(`/${v}/accounts/?limit=2&fields=name`).expect(200);
        assert.deepEqual(page.body.items, [{ name: 'Alice' }, { name: 'Bob' }]);
        assert.equal(page.body.next, `http://${HOST}/${v}/accounts/?limit=2&fields=name&offset=2`);
        const bob = await get(`/${v}/accounts/?name=Bob`).expect(200);
        assert.deepEqual(
          bob.body.items.map((a: { id: string }) => a.id),
          ['2'],
        );
      });

      it('answers 400 for an unknown filter or field', async () => {
        const filter = await get(`/${v}/accounts/?owner=x`).expect(400);
        assert.equal(filter.body.detail, "unknown query argument 'owner'; filterable fields: name");
        const field = await get(`/${v}/accounts/?fields=email`).expect(400);
        assert.match(field.body.detail, /unknown field 'email'/);
      });

      it('answers one account, and its messages at its messages_url', async () => {
        const res = await get(`/${v}/accounts/3`).expect(200);
        assert.equal(res.body.name, 'Carol');
        const messages = await get(new URL(res.body.messages_url).pathname).expect(200);
        assert.equal(messages.body.total, 10);
      });

      it('answers 404 for an unknown account and for a trailing slash', async () => {
        const missing = await get(`/${v}/accounts/4`).expect(404);
        assert.deepEqual(missing.body, { code: 404, message: '404: Not Found', detail: 'no account has this id' });
        const slash = await get(`/${v}/accounts/1/`).expect(404);
        assert.deepEqual(slash.body, { code: 404, message: '404: Not Found' });
      });

      it('redirects the slashless collection and refuses other methods', async () => {
        await get(`/${v}/accounts`).expect(301).expect('Location', `/${v}/accounts/`);
        await request(server).put(`/${v}/accounts`).expect(308).expect('Location', `/${v}/accounts/`);
        await request(server).delete(`/${v}/accounts/1`).expect(405).expect('Allow', 'HEAD, GET');
        await request(server).post(`/${v}/accounts/`).expect(405).expect('Allow', 'HEAD, GET');
      });
    });
  }
});
