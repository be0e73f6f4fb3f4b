/**
 * @module test/gateway/config/tls/records
 * Kubernetes Secrets, Hosts and TLSContexts as the config folder's records:
 * a Secret's data, stringData and files, its namespace, whatever the
 * ambassador_id; Emissary's Host and TLSContext with their notes; and what
 * each refuses, naming the record and field.
 */
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { asAnnotation, asResources, load, loaded, notesOf, problems, type Fixture } from '../../../support/emissary';

const SECRET = (extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'shop-cert', ...metadata },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': Buffer.from('crt').toString('base64'), 'tls.key': Buffer.from('key').toString('base64') },
    ...extra,
  });

const host = (spec: Record<string, unknown>, name = 'shop'): Fixture => ({ kind: 'Host', name, spec });

describe('TLS records of the config folder', () => {
  it('reads a Kubernetes Secret with its namespace, its data as written and its stringData as data', () => {
    const result = loaded(SECRET({ stringData: { 'ca.crt': 'PEM' } }, { namespace: 'shop' }));
    assert.deepEqual(result.config.secrets, [
      {
        apiVersion: 'gateway/v1',
        kind: 'Secret',
        name: 'shop-cert',
        namespace: 'shop',
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5', 'ca.crt': 'UEVN' },
        files: {},
      },
    ]);
  });

  it('reads the files a Secret names in its annotations, in place of its data', () => {
    const text = stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'files',
        annotations: {
          'files.gatehouse.io/tls.crt': 'certs/shop.pem',
          'files.gatehouse.io/tls.key': '/etc/shop.key',
          other: 'x',
        },
      },
      type: 'kubernetes.io/tls',
    });
    assert.deepEqual(loaded(text).config.secrets?.[0].files, {
      'tls.crt': 'certs/shop.pem',
      'tls.key': '/etc/shop.key',
    });
  });

  it('reads every Secret whatever the ambassador_id, as Emissary reads any Secret it is shown', () => {
    assert.equal(loaded(SECRET(), 'blue').config.secrets?.length, 1);
  });

  it('tells Secrets of one name apart by namespace, and refuses two of one name in one namespace', () => {
    assert.equal(loaded(`${SECRET()}---\n${SECRET({}, { namespace: 'shop' })}`).config.secrets?.length, 2);
    assert.deepEqual(problems(`${SECRET()}---\n${SECRET({}, { namespace: 'default' })}`), [
      "config/emissary.yaml: Secret shop-cert: name: duplicate name: another Secret is named 'default/shop-cert' (in config/emissary.yaml)",
    ]);
  });

  it('refuses data that is not base64, naming the Secret and the key, never the value', () => {
    const texts = problems(SECRET({ data: { 'tls.crt': 'not base64!', 'tls.key': 12 } }));
    assert.deepEqual(texts, [
      'config/emissary.yaml: Secret shop-cert: data.tls.crt: must be base64, as a Secret holds its data (stringData holds it as written)',
      'config/emissary.yaml: Secret shop-cert: data.tls.key: must be base64, as a Secret holds its data (stringData holds it as written)',
    ]);
  });

  it("reads Emissary's Host, its inline tls in either spelling, its selector as mappingSelector and its labels", () => {
    const text = asResources({
      ...host({
        hostname: 'Shop.Example',
        tlsSecret: { name: 'shop-cert' },
        tls: { minTlsVersion: 'v1.2', alpn_protocols: 'h2,http/1.1', caSecret: 'clients', certRequired: true },
        selector: { matchLabels: { team: 'shop' } },
        acmeProvider: { authority: 'https://acme-v02.api.letsencrypt.org/directory' },
      }),
    });
    const result = loaded(text);
    const [record] = result.config.hosts ?? [];
    assert.equal(record.hostname, 'shop.example');
    assert.deepEqual(record.tls, {
      min_tls_version: 'v1.2',
      alpn_protocols: ['h2', 'http/1.1'],
      ca_secret: 'clients',
      cert_required: true,
    });
    assert.deepEqual(record.mappingSelector, { matchLabels: { team: 'shop' } });
    assert.equal(record.requestPolicy.insecure.action, 'Redirect');
    assert.deepEqual(notesOf(result, 'shop'), [
      'spec.selector: read as mappingSelector, its newer name, as Emissary reads it',
      'spec.acmeProvider: not served: no certificate is requested by ACME (an Ambassador Edge Stack feature); give the certificate in tlsSecret, a Secret cert-manager or certbot keeps renewed',
      'spec.requestPolicy.insecure.action: not set: Redirect, as in Emissary: a request that comes over cleartext is answered 301 to https://',
    ]);
  });

  it("keeps a Host's additionalPort, a port or -1, as Emissary writes it, without a note", () => {
    const open = loaded(asResources(host({ requestPolicy: { insecure: { action: 'Route', additionalPort: 8080 } } })));
    assert.equal(open.config.hosts?.[0].requestPolicy.insecure.additionalPort, 8080);
    assert.deepEqual(notesOf(open, 'shop'), []);
    const none = loaded(asResources(host({ requestPolicy: { insecure: { action: 'Route', additionalPort: -1 } } })));
    assert.equal(none.config.hosts?.[0].requestPolicy.insecure.additionalPort, -1);
  });

  it('refuses an additionalPort that is no port, naming the Host and the field', () => {
    const port = (additionalPort: unknown, name: string) =>
      host({ requestPolicy: { insecure: { action: 'Route', additionalPort } } }, name);
    const texts = problems(
      asResources(port(0, 'zero'), port(65536, 'high'), port(8080.5, 'half'), port('8080', 'text'), port(-2, 'neg')),
    );
    const field = 'spec.requestPolicy.insecure.additionalPort: must be a port from 1 to 65535, or -1 for none';
    assert.deepEqual(texts, [
      `config/emissary.yaml: Host zero: ${field}`,
      `config/emissary.yaml: Host high: ${field}`,
      `config/emissary.yaml: Host half: ${field}`,
      `config/emissary.yaml: Host text: ${field}`,
      `config/emissary.yaml: Host neg: ${field}`,
    ]);
  });

  it('refuses what a Host cannot mean, at its field', () => {
    const texts = problems(
      asResources(
        host({ hostname: 'api.*' }, 'a'),
        host({ requestPolicy: { insecure: { action: 'Forbid' } } }, 'b'),
        host({ tlsContext: { name: 'x' }, tls: { min_tls_version: 'v1.2' } }, 'c'),
        host({ tls: { secret: 'x' } }, 'd'),
      ),
    );
    assert.deepEqual(texts, [
      "config/emissary.yaml: Host a: spec.hostname: 'api.*' is not a name a certificate is served for: a host name, *.example.com, or *",
      'config/emissary.yaml: Host b: spec.requestPolicy.insecure.action: must be Redirect, Route or Reject',
      'config/emissary.yaml: Host c: spec.tls: give tlsContext or tls, not both',
      "config/emissary.yaml: Host d: spec.tls.secret: give the Host's certificate in tlsSecret",
    ]);
  });

  it("reads Emissary's TLSContext, with a note on redirect_cleartext_from", () => {
    const spec = {
      hosts: ['shop.example', '*.shop.example'],
      secret: 'shop-cert.shop',
      ca_secret: 'clients',
      cert_required: true,
      min_tls_version: 'v1.2',
      max_tls_version: 'v1.3',
      alpn_protocols: 'h2, http/1.1',
      cipher_suites: ['ECDHE-ECDSA-AES128-GCM-SHA256'],
      ecdh_curves: ['X25519', 'P-256'],
      redirect_cleartext_from: 8080,
      secret_namespacing: true,
    };
    const result = loaded(asAnnotation('s', { kind: 'TLSContext', name: 'shop-context', spec }));
    const [record] = result.config.tlsContexts ?? [];
    assert.deepEqual(record.hosts, ['shop.example', '*.shop.example']);
    assert.deepEqual(record.alpn_protocols, ['h2', 'http/1.1']);
    assert.match(
      notesOf(result, 'shop-context')[0],
      /^redirect_cleartext_from: a request for its hosts that comes over cleartext/,
    );
  });

  it('refuses a TLSContext whose fields contradict each other, at the field', () => {
    const ctx = (name: string, spec: Record<string, unknown>): Fixture => ({ kind: 'TLSContext', name, spec });
    const texts = problems(
      asResources(
        ctx('a', { hosts: ['a.example'] }),
        ctx('b', { secret: 's', cert_chain_file: 'c.pem', private_key_file: 'k.pem' }),
        ctx('c', { cert_chain_file: 'c.pem' }),
        ctx('d', { secret: 's', cert_required: true }),
        ctx('e', { min_tls_version: 'v1.3', max_tls_version: 'v1.2' }),
        ctx('f', { min_tls_version: 'TLSv1.2', crl_secret: 'crl' }),
        ctx('g', { hosts: ['a.example:8443'], secret: 's' }),
      ),
    );
    assert.deepEqual(texts, [
      'config/emissary.yaml: TLSContext a: spec.hosts: serves these names with no certificate: give secret (or cert_chain_file and private_key_file)',
      'config/emissary.yaml: TLSContext b: spec.cert_chain_file: give secret or cert_chain_file, not both',
      'config/emissary.yaml: TLSContext c: spec.private_key_file: required with cert_chain_file',
      'config/emissary.yaml: TLSContext d: spec.cert_required: needs ca_secret (or cacert_chain_file): the authorities a client certificate is checked against',
      'config/emissary.yaml: TLSContext e: spec.max_tls_version: must not be below min_tls_version (v1.3)',
      'config/emissary.yaml: TLSContext f: spec.min_tls_version: must be v1.0, v1.1, v1.2 or v1.3',
      'config/emissary.yaml: TLSContext f: spec.crl_secret: not supported: certificate revocation lists are not read; remove the field',
      "config/emissary.yaml: TLSContext g: spec.hosts.0: 'a.example:8443' is not a name a certificate is served for: a host name, *.example.com, or *",
    ]);
  });

  it("keeps a Mapping's labels for a Host's mappingSelector", () => {
    const text = stringify({
      apiVersion: 'getambassador.io/v3alpha1',
      kind: 'Mapping',
      metadata: { name: 'quote', labels: { team: 'shop', size: 3 } },
      spec: { prefix: '/quote/', service: 'quote:80' },
    });
    assert.deepEqual(loaded(text).config.mappings[0].metadata_labels, { team: 'shop' });
    assert.equal(load(text).ok, true);
  });
});
