/**
 * @module test/gateway/tls/resolve
 * A configuration's certificates checked before it is served: each problem
 * named at the record and field that hold it (a key that is not the
 * certificate's, an expired certificate in service, a Secret or file that
 * is not there, a TLSContext nobody defined), Secrets looked for in the
 * namespace Emissary looks in, and what is shown of the certificates in
 * service (never a key).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { caSecret, tlsSecret, type Issued } from '../../support/certificates';
import { documents, resource, TlsConfigFolder } from '../../support/tls-config';

describe('the TLS a configuration is served with', function () {
  const folder = new TlsConfigFolder();
  let ca: Issued;
  let shop: Issued;
  let other: Issued;
  let expired: Issued;

  before(async () => {
    ca = await folder.certs.authority('Resolve CA');
    shop = await folder.certs.issue(ca, { cn: 'shop.test', names: ['shop.test'] });
    other = await folder.certs.issue(ca, { cn: 'other.test' });
    expired = await folder.certs.issue(ca, { cn: 'old.test', days: -1 });
  });
  after(() => folder.remove());

  it('serves each Host and TLSContext with its certificate, and describes the certificates in service', async () => {
    const gateway = await folder.gateway(
      documents(
        tlsSecret('shop-cert', shop),
        tlsSecret('other-cert', other, 'elsewhere'),
        caSecret('clients', ca),
        resource('Host', 'shop', {
          hostname: 'shop.test',
          tlsSecret: { name: 'shop-cert' },
          tls: { ca_secret: 'clients' },
        }),
        resource('TLSContext', 'other', { hosts: ['other.test'], secret: 'other-cert.elsewhere' }),
      ),
    );
    const tls = gateway.tls();
    assert.deepEqual(
      tls?.certificates?.contexts.map((c) => [c.entry.origin, c.entry.names, c.entry.settings.clientCertificates]),
      [
        ['Host shop', ['shop.test'], 'optional'],
        ['TLSContext other', ['other.test'], 'none'],
      ],
    );
    assert.deepEqual(
      tls?.inService.map((c) => [c.source, c.role, c.usedBy, c.subject, c.names]),
      [
        ['Secret default/shop-cert', 'serves', ['Host shop'], 'O=Gatehouse Tests, CN=shop.test', ['shop.test']],
        ['Secret default/clients', 'verifies', ['Host shop'], 'CN=Resolve CA', ['Resolve CA']],
        [
          'Secret elsewhere/other-cert',
          'serves',
          ['TLSContext other'],
          'O=Gatehouse Tests, CN=other.test',
          ['other.test'],
        ],
      ],
    );
    assert.doesNotMatch(JSON.stringify(tls?.inService), /PRIVATE KEY/);
    await gateway.close();
  });

  it("says a Host's TLSContext serves and verifies, never that it presents its certificate to an upstream", async () => {
    const gateway = await folder.gateway(
      documents(
        tlsSecret('shop-cert', shop),
        caSecret('clients', ca),
        resource('Host', 'shop', {
          hostname: 'shop.test',
          tlsSecret: { name: 'shop-cert' },
          tlsContext: { name: 'mtls' },
        }),
        resource('TLSContext', 'mtls', { secret: 'shop-cert', ca_secret: 'clients', cert_required: true }),
      ),
    );
    const tls = gateway.tls();
    assert.deepEqual(
      tls?.inService.map((c) => [c.source, c.role]),
      [
        ['Secret default/shop-cert', 'serves'],
        ['Secret default/clients', 'verifies'],
      ],
    );
    assert.equal(tls?.upstreams.size, 0);
    await gateway.close();
  });

  it("refuses a key that is not the certificate's, at the Secret's field, whether or not the Secret is used", async () => {
    assert.deepEqual(await folder.refusals(tlsSecret('shop-cert', { cert: shop.cert, key: other.key })), [
      'config/services.yaml: Secret shop-cert: data.tls.key: is not the key of the certificate (O=Gatehouse Tests, CN=shop.test)',
    ]);
  });

  it('refuses a Secret that holds no certificate, or no key', async () => {
    const texts = await folder.refusals(
      documents(
        tlsSecret('garbled', { cert: Buffer.from('hello'), key: shop.key }),
        'apiVersion: v1\nkind: Secret\nmetadata: {name: half}\ntype: kubernetes.io/tls\ndata: {tls.crt: aGVsbG8=}\n',
      ),
    );
    assert.deepEqual(texts, [
      'config/services.yaml: Secret garbled: data.tls.crt: holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)',
      'config/services.yaml: Secret half: data: holds no tls.key: a certificate and its key are tls.crt and tls.key',
    ]);
  });

  it('refuses a Host naming a Secret that is not there, saying where one of that name is', async () => {
    const texts = await folder.refusals(
      documents(
        tlsSecret('shop-cert', shop, 'shop'),
        resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
      ),
    );
    assert.deepEqual(texts, [
      'config/services.yaml: Host shop: tlsSecret.name: names no Secret default/shop-cert (there is shop/shop-cert: name its namespace)',
    ]);
  });

  it("looks for a Host's Secret in its namespace, or in the one tlsSecret names", async () => {
    const text = documents(
      tlsSecret('shop-cert', shop, 'shop'),
      resource('Host', 'a', { hostname: 'a.test', tlsSecret: { name: 'shop-cert' } }, 'shop'),
      resource('Host', 'b', { hostname: 'b.test', tlsSecret: { name: 'shop-cert', namespace: 'shop' } }),
    );
    const gateway = await folder.gateway(text);
    assert.equal(gateway.tls()?.certificates?.size, 2);
    await gateway.close();
  });

  it("reads a TLSContext's <name>.<namespace> as Emissary's secret_namespacing does, and as a name without it", async () => {
    const dotted = documents(
      tlsSecret('shop.cert', shop),
      tlsSecret('cert', other, 'shop'),
      resource('TLSContext', 'a', { hosts: ['a.test'], secret: 'cert.shop' }),
      resource('TLSContext', 'b', { hosts: ['b.test'], secret: 'shop.cert', secret_namespacing: false }),
    );
    const gateway = await folder.gateway(dotted);
    const served = gateway.tls()?.certificates;
    assert.equal(served?.choose('a.test')?.entry.pair.chain[0].subject, 'O=Gatehouse Tests, CN=other.test');
    assert.equal(served?.choose('b.test')?.entry.pair.chain[0].subject, 'O=Gatehouse Tests, CN=shop.test');
    await gateway.close();
  });

  it('refuses an expired certificate in service, at the field that holds it, and lets an unused one be', async () => {
    const unused = await folder.gateway(tlsSecret('old-cert', expired));
    await unused.close();
    const texts = await folder.refusals(
      documents(
        tlsSecret('old-cert', expired),
        resource('Host', 'old', { hostname: 'old.test', tlsSecret: { name: 'old-cert' } }),
      ),
    );
    assert.equal(texts.length, 1);
    assert.match(
      texts[0],
      /^config\/services\.yaml: Secret old-cert: data\.tls\.crt: the certificate \(O=Gatehouse Tests, CN=old\.test\) expired on \d{4}-\d\d-\d\dT[^ ]+: renew it \(Host old uses it\)$/,
    );
  });

  it("reads a TLSContext's files and a Secret's, each relative to the file that names it", async () => {
    mkdirSync(join(folder.dir, 'certs'), { recursive: true });
    writeFileSync(join(folder.dir, 'certs', 'shop.pem'), shop.cert);
    writeFileSync(join(folder.dir, 'certs', 'shop.key'), shop.key);
    const text = documents(
      resource('TLSContext', 'files', {
        hosts: ['shop.test'],
        cert_chain_file: 'certs/shop.pem',
        private_key_file: 'certs/shop.key',
      }),
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: by-file\n  annotations:\n    files.gatehouse.io/tls.crt: certs/shop.pem\n    files.gatehouse.io/tls.key: certs/shop.key\ntype: kubernetes.io/tls\n',
      resource('Host', 'h', { hostname: 'h.test', tlsSecret: { name: 'by-file' } }),
    );
    const gateway = await folder.gateway(text);
    assert.deepEqual(gateway.tls()?.files, [
      join(folder.dir, 'certs', 'shop.pem'),
      join(folder.dir, 'certs', 'shop.key'),
    ]);
    await gateway.close();
    const missing = await folder.refusals(
      resource('TLSContext', 'files', {
        hosts: ['shop.test'],
        cert_chain_file: 'certs/none.pem',
        private_key_file: 'certs/shop.key',
      }),
    );
    assert.deepEqual(missing, [
      `config/services.yaml: TLSContext files: cert_chain_file: cannot read config/certs/none.pem: no such file`,
    ]);
  });

  it('refuses a TLSContext nobody defined, a Host and its TLSContext naming two certificates, and a name served twice', async () => {
    const texts = await folder.refusals(
      documents(
        tlsSecret('shop-cert', shop),
        tlsSecret('other-cert', other),
        resource('TLSContext', 'ctx', { secret: 'other-cert' }),
        resource('Host', 'a', { hostname: 'a.test', tlsSecret: { name: 'shop-cert' }, tlsContext: { name: 'ctx' } }),
        resource('Host', 'b', { hostname: 'b.test', tlsSecret: { name: 'shop-cert' }, tlsContext: { name: 'nope' } }),
        resource('TLSContext', 'dup', { hosts: ['c.test'], secret: 'shop-cert' }),
        resource('TLSContext', 'dup2', { hosts: ['c.test'], secret: 'other-cert' }),
        resource('Mapping', 'm', { prefix: '/', service: 'up.test:443', tls: 'missing' }),
      ),
    );
    assert.deepEqual(texts, [
      'config/services.yaml: Host a: tlsContext.name: TLSContext ctx serves Secret default/other-cert, and tlsSecret names default/shop-cert: name one certificate',
      "config/services.yaml: Host b: tlsContext.name: names no TLSContext 'nope' (TLSContexts: ctx, dup, dup2)",
      'config/services.yaml: TLSContext dup2: hosts: c.test is served by TLSContext dup with another certificate',
      "config/services.yaml: Mapping m: tls: names no TLSContext 'missing' (TLSContexts: ctx, dup, dup2)",
    ]);
  });

  it('refuses a tls naming a TLSContext in a folder without any TLS record, in either form', async () => {
    const emissary = await folder.refusals(
      documents(
        resource('Mapping', 'm', { prefix: '/m/', service: 'https://up.test/', tls: 'upstream-cert-context' }),
        resource('AuthService', 'auth', { auth_service: 'auth.test:443', tls: 'auth-context' }),
      ),
    );
    assert.deepEqual(emissary, [
      "config/services.yaml: Mapping m: tls: names no TLSContext 'upstream-cert-context' (TLSContexts: none)",
      "config/services.yaml: AuthService auth: tls: names no TLSContext 'auth-context' (TLSContexts: none)",
    ]);
    const own = await folder.refusals(
      'apiVersion: gateway/v1\nkind: Mapping\nname: m\nprefix: /m/\nservice: https://up.test/\ntls: missing\n',
    );
    assert.deepEqual(own, ["config/services.yaml: Mapping m: tls: names no TLSContext 'missing' (TLSContexts: none)"]);
  });

  it('refuses ciphers and curves OpenSSL does not know, at their field', async () => {
    const texts = await folder.refusals(
      documents(
        tlsSecret('shop-cert', shop),
        resource('TLSContext', 'a', { hosts: ['a.test'], secret: 'shop-cert', cipher_suites: ['NO-SUCH-CIPHER'] }),
        resource('TLSContext', 'b', { hosts: ['b.test'], secret: 'shop-cert', ecdh_curves: ['no-such-curve'] }),
      ),
    );
    assert.equal(texts.length, 2, texts.join('\n'));
    assert.match(texts[0], /^config\/services\.yaml: TLSContext a: cipher_suites: .*cipher/i);
    assert.match(texts[1], /^config\/services\.yaml: TLSContext b: ecdh_curves: /);
  });
});
