/**
 * @module test/tls/store
 * The certificate a name gets, as Envoy chooses among its filter chains:
 * the exact name, the longest wildcard, the certificate for any name, and
 * the ALPN protocol agreed.
 */
import assert from 'node:assert/strict';
import {
  agreedProtocol,
  certificateFor,
  CertificateStore,
  checkPair,
  isProblem,
  servedContext,
  type ServedContext,
} from '../../src/tls';
import { CertificateFolder, type Issued } from '../support/certificates';

describe('the certificates of an HTTPS port', function () {
  const certs = new CertificateFolder();
  let pair: Issued;

  /** A context for `names`, known by its origin. */
  function served(origin: string, names: string[]): ServedContext {
    const checked = checkPair(pair.cert, pair.key);
    assert.ok(!isProblem(checked));
    return servedContext({ origin, names, pair: checked, settings: { clientCertificates: 'none' } });
  }

  before(async () => {
    const ca = await certs.authority('Store CA');
    pair = await certs.issue(ca, { cn: 'store.test' });
  });
  after(() => certs.remove());

  it('gives the exact name first, then the longest wildcard, then the one for any name', () => {
    const store = new CertificateStore([
      served('wide', ['*.test']),
      served('narrow', ['*.shop.test']),
      served('exact', ['api.shop.test']),
      served('any', ['*']),
    ]);
    const chosen = (name: string | undefined) => store.choose(name)?.entry.origin;
    assert.equal(chosen('api.shop.test'), 'exact');
    assert.equal(chosen('API.Shop.Test.'), 'exact');
    assert.equal(chosen('www.shop.test'), 'narrow');
    assert.equal(chosen('a.b.shop.test'), 'narrow');
    assert.equal(chosen('shop.test'), 'wide');
    assert.equal(chosen('elsewhere.example'), 'any');
    assert.equal(chosen(undefined), 'any');
  });

  it('keeps the first of two certificates for one name', () => {
    const store = new CertificateStore([served('first', ['a.test']), served('second', ['a.test'])]);
    assert.equal(store.choose('a.test')?.entry.origin, 'first');
  });

  it('serves the fallback, then the first certificate, to a name nothing covers', () => {
    const store = new CertificateStore([served('first', ['a.test']), served('second', ['b.test'])]);
    assert.equal(store.choose('c.test'), undefined);
    assert.equal(certificateFor({ store }, 'c.test')?.entry.origin, 'first');
    assert.equal(certificateFor({ store }, undefined)?.entry.origin, 'first');
    const fallback = served('--tls-cert', []);
    assert.equal(certificateFor({ store, fallback }, 'c.test')?.entry.origin, '--tls-cert');
    assert.equal(certificateFor({ store, fallback }, 'b.test')?.entry.origin, 'second');
  });

  it("agrees on the first protocol of the context's that the client offers and the server speaks", () => {
    assert.equal(agreedProtocol(['h2', 'http/1.1'], ['http/1.1', 'h2'], ['http/1.1']), 'http/1.1');
    assert.equal(agreedProtocol(['h2', 'http/1.1'], ['http/1.1', 'h2'], ['h2', 'http/1.1']), 'h2');
    assert.equal(agreedProtocol(['h2'], ['http/1.1'], ['http/1.1']), undefined);
  });

  it("refuses a context whose ciphers OpenSSL does not know, with OpenSSL's reason", () => {
    const checked = checkPair(pair.cert, pair.key);
    assert.ok(!isProblem(checked));
    assert.throws(
      () =>
        servedContext({
          origin: 'x',
          names: ['x.test'],
          pair: checked,
          settings: { clientCertificates: 'none', ciphers: 'NOT-A-CIPHER' },
        }),
      /cipher/i,
    );
  });
});
