/**
 * @module test/tls/material
 * Certificates and keys checked as an operator is told of them: what each
 * part holds, a key that is not the certificate's, an encrypted key, and
 * what is shown of a certificate (never its key).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  certificateLine,
  checkBundle,
  checkPair,
  describeCertificate,
  isProblem,
  readCertificates,
  validityProblem,
} from '../../src/tls';
import { CertificateFolder, type Issued } from '../support/certificates';

describe('TLS material', function () {
  const certs = new CertificateFolder();
  let ca: Issued;
  let shop: Issued;
  let other: Issued;

  before(async () => {
    ca = await certs.authority('Material CA');
    shop = await certs.issue(ca, { cn: 'shop.test', names: ['shop.test', 'www.shop.test', 'IP:127.0.0.1'] });
    other = await certs.issue(ca, { cn: 'other.test' });
  });
  after(() => certs.remove());

  it('describes a certificate by subject, issuer, names and validity', () => {
    const [leaf] = readCertificates(shop.cert);
    const info = describeCertificate(leaf);
    assert.equal(info.subject, 'O=Gatehouse Tests, CN=shop.test');
    assert.equal(info.issuer, 'CN=Material CA');
    assert.deepEqual(info.names, ['shop.test', 'www.shop.test', '127.0.0.1']);
    assert.match(info.sha256, /^[0-9a-f]{64}$/);
    assert.ok(info.validTo.getTime() > Date.now());
    assert.match(
      certificateLine(info),
      /^O=Gatehouse Tests, CN=shop\.test \(shop\.test, www\.shop\.test, 127\.0\.0\.1\), issued by CN=Material CA, valid to \d{4}-/,
    );
  });

  it('takes a chain and its key that go together', () => {
    const pair = checkPair(Buffer.concat([shop.cert, ca.cert]), shop.key);
    assert.ok(!isProblem(pair));
    assert.deepEqual(
      pair.chain.map((c) => c.subject),
      ['O=Gatehouse Tests, CN=shop.test', 'CN=Material CA'],
    );
  });

  it('says which part is wrong, never quoting the key', () => {
    const mismatch = checkPair(shop.cert, other.key);
    assert.deepEqual(mismatch, {
      part: 'key',
      message: 'is not the key of the certificate (O=Gatehouse Tests, CN=shop.test)',
    });
    assert.deepEqual(checkPair(Buffer.from('hello'), shop.key), {
      part: 'cert',
      message: 'holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)',
    });
    assert.deepEqual(checkPair(shop.cert, Buffer.from('not a key')), {
      part: 'key',
      message: 'holds no private key in PEM form (-----BEGIN PRIVATE KEY-----)',
    });
    const broken = Buffer.from(shop.cert.toString().replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA'));
    const unreadable = checkPair(broken, shop.key);
    assert.ok(isProblem(unreadable) && unreadable.part === 'cert');
    for (const problem of [mismatch, unreadable]) assert.doesNotMatch(JSON.stringify(problem), /PRIVATE KEY-----\n/);
  });

  it('refuses an encrypted key, saying how to give it plain', () => {
    const encrypted = execFileSync('openssl', ['pkey', '-in', shop.keyFile, '-aes256', '-passout', 'pass:secret']);
    assert.deepEqual(checkPair(shop.cert, encrypted), {
      part: 'key',
      message: 'is an encrypted key: give it without its passphrase (openssl pkey -in key.pem -out plain.pem)',
    });
  });

  it('reads a bundle of authorities, and refuses one without a certificate', () => {
    const bundle = checkBundle(Buffer.concat([ca.cert, readFileSync(join(certs.dir, 'Material-CA.crt'))]));
    assert.ok(!isProblem(bundle));
    assert.equal(bundle.certificates.length, 2);
    assert.deepEqual(checkBundle(shop.key), {
      part: 'ca',
      message: 'holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)',
    });
  });

  it('tells an expired certificate from one not valid yet', async () => {
    const old = await certs.issue(ca, { cn: 'old.test', days: -1 });
    const info = describeCertificate(readCertificates(old.cert)[0]);
    assert.equal(validityProblem(info, Date.now()), 'expired');
    assert.equal(
      validityProblem(describeCertificate(readCertificates(shop.cert)[0]), Date.now() - 86_400_000),
      'not yet valid',
    );
    assert.equal(validityProblem(describeCertificate(readCertificates(shop.cert)[0]), Date.now()), undefined);
  });
});
