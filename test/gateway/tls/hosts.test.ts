/**
 * @module test/gateway/tls/hosts
 * Hosts as a request meets them: the Host its host chooses (exact, longest
 * wildcard, then any), a host no Host serves (404), what a request over
 * cleartext gets (Redirect's 301 to https on the same host, path and
 * query; Reject's 403; Route), and the Mappings each Host serves, by
 * hostname or by label.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { globsMayMeet } from '../../../src/gateway/tls';
import { tlsSecret, type Issued } from '../../support/certificates';
import { echoModule, registry } from '../../support/modules';
import { documents, resource, TlsConfigFolder } from '../../support/tls-config';

const modules = registry(echoModule('echo'), echoModule('other'));

describe('Hosts', function () {
  const folder = new TlsConfigFolder();
  let shop: Issued;

  before(async () => {
    const ca = await folder.certs.authority('Hosts CA');
    shop = await folder.certs.issue(ca, { cn: 'shop.test', names: ['shop.test', '*.shop.test'] });
  });
  after(() => folder.remove());

  it('meet a Mapping when some host could match both globs, as Emissary says', () => {
    const cases: [string, string, boolean][] = [
      ['shop.test', 'shop.test', true],
      ['*', 'shop.test', true],
      ['*.shop.test', 'api.shop.test', true],
      ['*.shop.test', 'shop.test', false],
      ['*.shop.test', '*.test', true],
      ['api.*', '*.shop.test', true],
      ['shop.test', 'other.test', false],
      ['shop.test', 'shop.test:8443', true],
    ];
    for (const [a, b, meet] of cases) {
      assert.equal(globsMayMeet(a, b), meet, `${a} ~ ${b}`);
      assert.equal(globsMayMeet(b, a), meet, `${b} ~ ${a}`);
    }
  });

  describe('with a certificate', () => {
    let app: ReturnType<Awaited<ReturnType<TlsConfigFolder['gateway']>>['app']['callback']>;

    before(async () => {
      const gateway = await folder.gateway(
        documents(
          tlsSecret('shop-cert', shop),
          resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
          resource('Host', 'api', {
            hostname: '*.shop.test',
            tlsSecret: { name: 'shop-cert' },
            requestPolicy: { insecure: { action: 'Route' } },
            mappingSelector: { matchLabels: { tier: 'api' } },
          }),
          resource('Host', 'admin', {
            hostname: 'admin.shop.test',
            tlsSecret: { name: 'shop-cert' },
            requestPolicy: { insecure: { action: 'Reject' } },
          }),
          resource('Host', 'plain', { hostname: 'plain.test' }),
          resource('Mapping', 'any', { prefix: '/', service: 'echo', hostname: '*' }),
          'apiVersion: getambassador.io/v3alpha1\nkind: Mapping\nmetadata: {name: labelled, labels: {tier: api}}\nspec: {prefix: /, service: other, precedence: 1, hostname: "*.shop.test"}\n',
        ),
        { modules, trustProxy: true, tls: { httpsPort: () => 8443 } },
      );
      app = gateway.app.callback();
    });

    it("redirects a request over cleartext to https on the same host, path and query (301, Emissary's default)", async () => {
      const res = await request(app).get('/a/b?c=1&d').set('Host', 'shop.test');
      assert.equal(res.status, 301);
      assert.equal(res.headers.location, 'https://shop.test/a/b?c=1&d');
      const withPort = await request(app).get('/x').set('Host', 'shop.test:8080');
      assert.equal(withPort.headers.location, 'https://shop.test:8443/x');
    });

    it('serves a request that came over TLS (here, as the trusted proxy says)', async () => {
      const res = await request(app).get('/a').set('Host', 'shop.test').set('X-Forwarded-Proto', 'https');
      assert.equal(res.status, 200);
      assert.equal(res.body.module, 'echo');
    });

    it('answers 403 to cleartext for a Host that rejects it, and routes it for one that routes it', async () => {
      const rejected = await request(app).get('/').set('Host', 'admin.shop.test');
      assert.equal(rejected.status, 403);
      assert.deepEqual(rejected.body, {
        code: 403,
        message: '403: Forbidden',
        detail: 'admin.shop.test is served over HTTPS only',
      });
      const routed = await request(app).get('/').set('Host', 'www.shop.test');
      assert.equal(routed.status, 200);
    });

    it('answers 404 for a host no Host serves, naming it', async () => {
      const res = await request(app).get('/').set('Host', 'elsewhere.test');
      assert.equal(res.status, 404);
      assert.equal(res.body.detail, 'no Host serves elsewhere.test');
    });

    it('serves the Mappings a Host selects by label, and by hostname without a selector', async () => {
      const api = await request(app).get('/').set('Host', 'www.shop.test');
      assert.equal(api.body.module, 'other');
      const shopHost = await request(app).get('/').set('Host', 'shop.test').set('X-Forwarded-Proto', 'https');
      assert.equal(shopHost.body.module, 'echo');
    });

    it('routes cleartext for a Host without a certificate, whatever its action', async () => {
      const res = await request(app).get('/').set('Host', 'plain.test');
      assert.equal(res.status, 200);
    });

    it("answers the gateway's own paths on any host, over cleartext too", async () => {
      const res = await request(app).get('/gateway/v0/check_alive').set('Host', 'elsewhere.test');
      assert.equal(res.status, 200);
    });
  });

  it("redirects the hosts of a TLSContext's redirect_cleartext_from, without a Host", async () => {
    const gateway = await folder.gateway(
      documents(
        tlsSecret('shop-cert', shop),
        resource('TLSContext', 'ctx', { hosts: ['*.shop.test'], secret: 'shop-cert', redirect_cleartext_from: 8080 }),
        resource('Mapping', 'any', { prefix: '/', service: 'echo' }),
      ),
      { modules },
    );
    const app = gateway.app.callback();
    assert.equal((await request(app).get('/x').set('Host', 'a.shop.test')).headers.location, 'https://a.shop.test/x');
    assert.equal((await request(app).get('/x').set('Host', 'other.test')).status, 200);
    await gateway.close();
  });
});
