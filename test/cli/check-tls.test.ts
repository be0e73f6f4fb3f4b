/**
 * @module test/cli/check-tls
 * `gatehouse check` on a folder of certificates: what each certificate in
 * service is (source, role, user, subject, issuer, names, validity), never
 * a key; and a folder whose certificate cannot be served refused, naming
 * the resource and field.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFolder } from '../../src/cli/check';
import { CertificateFolder, tlsSecret, type Issued } from '../support/certificates';
import { documents, resource } from '../support/tls-config';

describe('gatehouse check, on certificates', function () {
  const certs = new CertificateFolder();
  let shop: Issued;
  let other: Issued;
  let dir: string;

  before(async () => {
    const ca = await certs.authority('Check CA');
    shop = await certs.issue(ca, { cn: 'shop.test', names: ['shop.test', 'www.shop.test'] });
    other = await certs.issue(ca, { cn: 'other.test' });
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-check-tls-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    certs.remove();
  });

  it('lists each certificate in service by what it says of itself, never its key', async () => {
    writeFileSync(
      join(dir, 'tls.yaml'),
      documents(
        tlsSecret('shop-cert', shop),
        resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
      ),
    );
    const report = await checkFolder(dir);
    assert.equal(report.ok, true, report.text);
    assert.match(
      report.text,
      /\nCertificates:\n {2}Secret default\/shop-cert serves \(Host shop\): O=Gatehouse Tests, CN=shop\.test\n {4}issuer CN=Check CA; names shop\.test, www\.shop\.test; valid \d{4}-[^ ]+ to \d{4}-[^ ]+\n/,
    );
    assert.doesNotMatch(report.text, /PRIVATE KEY|LS0tLS1CRUdJTi/);
  });

  it('counts the Hosts and Secrets of each file and of the folder, after the routes', async () => {
    writeFileSync(
      join(dir, 'tls.yaml'),
      documents(
        tlsSecret('shop-cert', shop),
        resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
      ),
    );
    const report = await checkFolder(dir);
    assert.equal(report.ok, true, report.text);
    assert.match(report.text, /\n {2}tls\.yaml {2}Emissary resources {2}1 Host, 1 Secret; from 1 Emissary resource\n/);
    assert.match(
      report.text,
      /\nLoaded: 0 Mappings, 0 AuthServices, 0 RateLimitServices, 1 Host, 1 Secret, from 1 Emissary/,
    );
  });

  it('refuses a certificate that cannot be served, naming the Secret and the field', async () => {
    writeFileSync(join(dir, 'tls.yaml'), tlsSecret('shop-cert', { cert: shop.cert, key: other.key }));
    const report = await checkFolder(dir);
    assert.equal(report.ok, false);
    assert.equal(
      report.text,
      `${join(dir, 'tls.yaml')}: Secret shop-cert: data.tls.key: is not the key of the certificate (O=Gatehouse Tests, CN=shop.test)\n`,
    );
  });
});
