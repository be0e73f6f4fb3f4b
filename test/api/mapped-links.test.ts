/**
 * @module test/api/mapped-links
 * The API behind a real gateway whose Mappings rewrite to paths below a
 * version's root (`/m/` to `/v1/messages/`): every link and Location a
 * client gets works from where the client is. A link to what the rewritten
 * prefix covers is under that prefix; any other is the module's own path,
 * which the gateway's Mapping for the API's own paths routes.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import request from 'supertest';
import { createApiModule } from '../../src/api';
import { createGateway, type Gateway } from '../../src/gateway';
import { close } from '../support/server';
import { configOf, mapping } from '../support/records';
import { registry } from '../support/modules';

const HOST = 'api.test';

const records = [
  mapping('/m/', 'api', { rewrite: '/v1/messages/', bypass_auth: true }),
  mapping('/a/', 'api', { rewrite: '/v2/accounts/', bypass_auth: true }),
  mapping('/api/', 'api', { bypass_auth: true }),
  mapping('/latest', 'api', { prefix_exact: true, rewrite: '/v2/messages/', bypass_auth: true }),
  // The API's own paths, as the demo routes them.
  mapping('/v1/', 'api', { rewrite: '', bypass_auth: true }),
  mapping('/v2/', 'api', { rewrite: '', bypass_auth: true }),
];

/** Every absolute URL in a body, however deep. */
function urlsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string' && value.startsWith('http://')) found.push(value);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) urlsIn(v, found);
  return found;
}

describe('api behind Mappings that rewrite below a version root', () => {
  let gateway: Gateway;
  let server: http.Server;
  const get = (path: string) => request(server).get(path).set('Host', HOST);

  before(async () => {
    gateway = createGateway({ config: configOf(...records), modules: registry(createApiModule()) });
    server = http.createServer(gateway.app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await close(server);
    await gateway.close();
  });

  /** Fetches every URL of a body through the gateway: each must answer 200. */
  async function followAll(body: unknown): Promise<void> {
    for (const url of urlsIn(body)) {
      assert.ok(url.startsWith(`http://${HOST}/`), url);
      const res = await get(url.slice(`http://${HOST}`.length));
      assert.equal(res.status, 200, `${url} answered ${res.status}`);
    }
  }

  it('writes an item reached through the prefix under it', async () => {
    const res = await get('/m/1').expect(200);
    assert.equal(res.body.url, `http://${HOST}/m/1`);
  });

  it('writes next and Link of a page under the prefix, and its items too', async () => {
    const res = await get('/m/?limit=1').expect(200);
    assert.equal(res.body.next, `http://${HOST}/m/?limit=1&offset=1`);
    assert.equal(res.headers.link, `<http://${HOST}/m/?limit=1&offset=1>; rel="next"`);
    assert.equal(res.body.items[0].url, `http://${HOST}/m/1`);
    await followAll(res.body);
  });

  it('writes an account and its messages under /a/', async () => {
    const res = await get('/a/1').expect(200);
    assert.equal(res.body.url, `http://${HOST}/a/1`);
    assert.equal(res.body.messages_url, `http://${HOST}/a/1/messages/`);
    await followAll(res.body);
    const page = await get('/a/?limit=1').expect(200);
    assert.equal(page.body.next, `http://${HOST}/a/?limit=1&offset=1`);
  });

  it('writes what the prefix does not cover as the module answers it, which resolves', async () => {
    const res = await get('/a/1/messages/?limit=1').expect(200);
    const message = res.body.items[0];
    assert.equal(message.account_url, `http://${HOST}/a/1`);
    assert.equal(message.url, `http://${HOST}/v2/messages/${message.id}`);
    assert.equal(res.body.next, `http://${HOST}/a/1/messages/?limit=1&offset=1`);
    await followAll(res.body);
  });

  it('redirects a slashless collection under the prefix the client used', async () => {
    await get('/a/1/messages?limit=2').expect(301).expect('Location', '/a/1/messages/?limit=2');
    await request(server).post('/a/1/messages').set('Host', HOST).expect(308).expect('Location', '/a/1/messages/');
    await get('/api/v2/accounts').expect(301).expect('Location', '/api/v2/accounts/');
    await get('/api/v1').expect(301).expect('Location', '/api/v1/');
  });

  it('keeps a prefix that hands the whole API on (the default rewrite)', async () => {
    const res = await get('/api/v2/messages/?limit=1').expect(200);
    assert.equal(res.body.next, `http://${HOST}/api/v2/messages/?limit=1&offset=1`);
    assert.equal(res.body.items[0].account_url, `http://${HOST}/api/v2/accounts/1`);
    const root = await get('/api/v1/').expect(200);
    assert.equal(root.body.messages_url, `http://${HOST}/api/v1/messages/`);
    await followAll(root.body);
  });

  it('writes the one path an exact prefix routes under it, and the rest as the module answers them', async () => {
    const res = await get('/latest?limit=1').expect(200);
    assert.equal(res.body.next, `http://${HOST}/latest?limit=1&offset=1`);
    assert.equal(res.body.items[0].url, `http://${HOST}/v2/messages/1`);
    await followAll(res.body);
  });

  it("changes nothing for the API's own paths", async () => {
    const res = await get('/v2/messages/1').expect(200);
    assert.equal(res.body.url, `http://${HOST}/v2/messages/1`);
    assert.equal(res.body.account_url, `http://${HOST}/v2/accounts/1`);
    await get('/v1/accounts/2/messages').expect(301).expect('Location', '/v1/accounts/2/messages/');
  });

  describe('the redirect of a collection, whatever Accept says', () => {
    // `/api/v1`: the version root, which the API's dispatcher redirects; the rest, collections of a version app.
    for (const path of ['/api/v1', '/v1/messages', '/v2/accounts/1/messages', '/a/1/messages']) {
      it(`answers ${path} in XML, JSON or by default with an empty body`, async () => {
        for (const accept of ['application/xml', 'application/json', '*/*', undefined]) {
          const req = get(path);
          if (accept !== undefined) req.set('Accept', accept);
          const res = await req
            .expect(301)
            .expect('Location', `${path}/`)
            .expect('Vary', /Accept/)
            .expect('Content-Length', '0');
          assert.equal(res.text ?? '', '', `${accept}: ${res.text}`);
          assert.equal(res.headers['content-type'], undefined);
        }
      });

      it(`answers ${path} with a 406 for an Accept it cannot write, as its collection does`, async () => {
        const res = await get(path)
          .set('Accept', 'text/html')
          .expect(406)
          .expect('Content-Type', /^application\/json/);
        assert.deepEqual(res.body, {
          code: 406,
          message: '406: Not Acceptable',
          detail: 'supported types: application/json, application/xml',
        });
      });
    }
  });
});
