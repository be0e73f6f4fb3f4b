/**
 * @module test/gatehouse/https-port
 * The HTTPS port as real clients meet it: `openssl s_client` for the
 * certificate each name gets (exact, wildcard, any, none, unknown, a
 * hostile ClientHello), ALPN and protocol versions; `curl --resolve` for
 * requests routed by Host and the redirect from cleartext.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { caSecret, tlsSecret, type Issued } from '../support/certificates';
import { documents, resource } from '../support/tls-config';
import { CertificateFolder } from '../support/certificates';
import {
  runCurl,
  recordingUpstream,
  runSClient,
  startTlsRig,
  type RecordingUpstream,
  type TlsRig,
} from '../support/tls-rig';

/** A TLS 1.2 ClientHello naming `name` (its SNI), as a hostile client may write it: no length checked. */
function clientHello(name: Buffer): Buffer {
  const u16 = (n: number) => Buffer.from([n >> 8, n & 255]);
  const entry = Buffer.concat([Buffer.from([0]), u16(name.length), name]);
  const list = Buffer.concat([u16(entry.length), entry]);
  const sni = Buffer.concat([u16(0), u16(list.length), list]);
  const body = Buffer.concat([
    Buffer.from([3, 3]),
    Buffer.alloc(32, 7),
    Buffer.from([0]),
    u16(4),
    Buffer.from([0xc0, 0x2b, 0xc0, 0x2f]),
    Buffer.from([1, 0]),
    u16(sni.length),
    sni,
  ]);
  const handshake = Buffer.concat([Buffer.from([1, 0, body.length >> 8, body.length & 255]), body]);
  return Buffer.concat([Buffer.from([22, 3, 1]), u16(handshake.length), handshake]);
}

/** Sends `bytes` and resolves what came back before the server closed the connection. */
function exchange(port: number, bytes: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.on('error', () => undefined);
  });
}

describe('the HTTPS port, asked by openssl and curl', function () {
  const certs = new CertificateFolder();
  let ca: Issued;
  let upstream: RecordingUpstream;
  let rig: TlsRig;
  let port: number;

  before(async () => {
    ca = await certs.authority('Port CA');
    const shop = await certs.issue(ca, { cn: 'shop.test' });
    const wild = await certs.issue(ca, { cn: 'wild', names: ['*.api.test'] });
    const any = await certs.issue(ca, { cn: 'any', names: ['any.test'] });
    const modern = await certs.issue(ca, { cn: 'modern.test' });
    const legacy = await certs.issue(ca, { cn: 'legacy.test' });
    upstream = await recordingUpstream();
    rig = await startTlsRig({
      'tls.yaml': documents(
        tlsSecret('shop-cert', shop),
        tlsSecret('wild-cert', wild),
        tlsSecret('any-cert', any),
        tlsSecret('modern-cert', modern),
        tlsSecret('legacy-cert', legacy),
        caSecret('unused-ca', ca),
        resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
        resource('Host', 'api', { hostname: '*.api.test', tlsSecret: { name: 'wild-cert' } }),
        resource('Host', 'any', { tlsSecret: { name: 'any-cert' }, requestPolicy: { insecure: { action: 'Route' } } }),
        resource('TLSContext', 'modern', {
          hosts: ['modern.test'],
          secret: 'modern-cert',
          min_tls_version: 'v1.3',
          alpn_protocols: 'h2',
        }),
        resource('TLSContext', 'legacy', {
          hosts: ['legacy.test'],
          secret: 'legacy-cert',
          max_tls_version: 'v1.2',
          cipher_suites: ['ECDHE-ECDSA-AES128-GCM-SHA256'],
        }),
        resource('Mapping', 'all', { prefix: '/', service: upstream.address, hostname: '*', rewrite: '' }),
        resource('Mapping', 'diag', { prefix: '/gateway/v0/diag', service: 'diag', hostname: '*' }),
      ),
    });
    port = rig.httpsPort()!;
    assert.ok(port > 0, 'the HTTPS port is open');
  });
  after(async () => {
    await rig?.stop();
    await upstream?.close();
    certs.remove();
  });

  it('serves the certificate of the exact name, the longest wildcard, and the Host without a hostname', async () => {
    assert.equal((await runSClient(port, ['-servername', 'shop.test'])).subject, 'O = Gatehouse Tests, CN = shop.test');
    assert.equal((await runSClient(port, ['-servername', 'a.b.api.test'])).subject, 'O = Gatehouse Tests, CN = wild');
    assert.equal((await runSClient(port, ['-servername', 'unknown.test'])).subject, 'O = Gatehouse Tests, CN = any');
  });

  it('serves the certificate for any name to a client that names none (no SNI)', async () => {
    assert.equal((await runSClient(port, ['-noservername'])).subject, 'O = Gatehouse Tests, CN = any');
  });

  it('refuses a ClientHello whose name is longer than 255 bytes with an alert, and goes on serving', async () => {
    const answer = await exchange(port, clientHello(Buffer.alloc(300, 'a')));
    // An alert record (21), fatal (2): unrecognized_name (112) or decode_error (50).
    assert.equal(answer[0], 21, `an alert record, got ${answer.toString('hex').slice(0, 20)}`);
    assert.ok([112, 50].includes(answer[6]), `alert ${answer[6]}`);
    const garbage = await exchange(port, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    assert.equal(garbage.length, 0, 'plain HTTP on the HTTPS port is closed unanswered');
    assert.equal((await runSClient(port, ['-servername', 'shop.test'])).subject, 'O = Gatehouse Tests, CN = shop.test');
  });

  it('routes a request by its Host with curl --resolve, telling the upstream it came over https', async () => {
    const res = await runCurl([
      '--cacert',
      ca.certFile,
      '--resolve',
      `shop.test:${port}:127.0.0.1`,
      `https://shop.test:${port}/basket?x=1`,
    ]);
    assert.equal(res.status, 200, res.stderr);
    assert.equal(JSON.parse(res.body).path, '/basket?x=1');
    assert.equal(upstream.last()?.['x-forwarded-proto'], 'https');
    assert.equal(upstream.last()?.['x-forwarded-host'], `shop.test:${port}`);
  });

  it('redirects cleartext to https on the same host, path and query, the HTTPS port named when the client named one', async () => {
    const location = async (host: string) => {
      const res = await runCurl(['-i', '-H', `Host: ${host}`, `http://127.0.0.1:${rig.port}/basket?x=1`]);
      assert.equal(res.status, 301);
      return /^location: (.*)\r$/im.exec(res.body)?.[1];
    };
    assert.equal(await location('shop.test'), 'https://shop.test/basket?x=1');
    assert.equal(await location(`shop.test:${rig.port}`), `https://shop.test:${port}/basket?x=1`);
    const routed = await runCurl(['-H', 'Host: elsewhere.test', `http://127.0.0.1:${rig.port}/x`]);
    assert.equal(routed.status, 200, 'the Host for any name routes cleartext');
  });

  it("closes a connection that agreed on a version below its context's min_tls_version, and keeps one at it", async () => {
    const resolve = [
      '--cacert',
      ca.certFile,
      '--resolve',
      `modern.test:${port}:127.0.0.1`,
      `https://modern.test:${port}/`,
    ];
    const old = await runCurl(['--tls-max', '1.2', ...resolve]);
    assert.notEqual(old.code, 0, 'TLS 1.2 is refused');
    assert.equal(old.status, 0);
    const current = await runCurl(['--tlsv1.3', '--no-alpn', ...resolve]);
    assert.equal(current.status, 200, current.stderr);
    const elsewhere = await runCurl([
      '--tls-max',
      '1.2',
      '--cacert',
      ca.certFile,
      '--resolve',
      `shop.test:${port}:127.0.0.1`,
      `https://shop.test:${port}/`,
    ]);
    assert.equal(elsewhere.status, 200, 'another name keeps TLS 1.2');
  });

  it("keeps a context's max_tls_version and cipher_suites: a connection outside them is closed, one within served", async () => {
    const legacy = [
      '--cacert',
      ca.certFile,
      '--resolve',
      `legacy.test:${port}:127.0.0.1`,
      `https://legacy.test:${port}/`,
    ];
    const listed = await runCurl(['--tls-max', '1.2', '--ciphers', 'ECDHE-ECDSA-AES128-GCM-SHA256', ...legacy]);
    assert.equal(listed.status, 200, listed.stderr);
    const unlisted = await runCurl(['--tls-max', '1.2', '--ciphers', 'ECDHE-ECDSA-AES256-GCM-SHA384', ...legacy]);
    assert.equal(unlisted.status, 0, 'a cipher the context does not list is closed');
    assert.notEqual(unlisted.code, 0);
    // The port agrees on TLS 1.3 before the name is read: above the context's max, the connection is closed.
    const above = await runCurl(['--tlsv1.3', ...legacy]);
    assert.equal(above.status, 0, 'TLS 1.3 is above the context');
    const shop = ['--cacert', ca.certFile, '--resolve', `shop.test:${port}:127.0.0.1`, `https://shop.test:${port}/`];
    const other = await runCurl(['--tls-max', '1.2', '--ciphers', 'ECDHE-ECDSA-AES256-GCM-SHA384', ...shop]);
    assert.equal(other.status, 200, 'another name keeps its ciphers');
  });

  it("answers 421 to a request for that context's name on a TLS 1.2 connection made for another name", async () => {
    const shop = ['--cacert', ca.certFile, '--resolve', `shop.test:${port}:127.0.0.1`, `https://shop.test:${port}/`];
    const fronted = await runCurl(['--tls-max', '1.2', '-H', 'Host: modern.test', ...shop]);
    assert.equal(fronted.status, 421, fronted.stderr);
    assert.match(fronted.body, /another name than modern\.test/);
    const current = await runCurl(['--tlsv1.3', '-H', 'Host: modern.test', ...shop]);
    assert.equal(current.status, 200, 'a TLS 1.3 connection meets what modern.test asks');
  });

  it("agrees on h2 first, else http/1.1, within a context's alpn_protocols, and refuses a client that offers none of them", async () => {
    const http11 = await runSClient(port, ['-servername', 'modern.test', '-alpn', 'http/1.1']);
    assert.match(http11.output, /alert no application protocol/, http11.output);
    const both = await runSClient(port, ['-servername', 'shop.test', '-alpn', 'h2,http/1.1']);
    assert.match(both.output, /ALPN protocol: h2/, both.output);
    const older = await runSClient(port, ['-servername', 'shop.test', '-alpn', 'http/1.1']);
    assert.match(older.output, /ALPN protocol: http\/1\.1/, older.output);
  });

  it('answers over HTTP/2 a client that agreed on h2, through the whole gateway', async () => {
    const res = await runCurl([
      '--http2',
      '-v',
      '--cacert',
      ca.certFile,
      '--resolve',
      `shop.test:${port}:127.0.0.1`,
      `https://shop.test:${port}/things?x=1`,
    ]);
    assert.equal(res.status, 200, res.stderr);
    assert.match(res.stderr, /^< HTTP\/2 200/m, res.stderr);
    const seen = JSON.parse(res.body) as { path: string; headers: Record<string, string> };
    assert.equal(seen.path, '/things?x=1');
    assert.equal(seen.headers['x-forwarded-proto'], 'https');
  });

  it('serves the certificates in service to the expiry metric, never a key', async () => {
    const res = await runCurl([`http://127.0.0.1:${rig.port}/gateway/v0/metrics`]);
    const lines = res.body
      .split('\n')
      .filter((l) => l.startsWith('gatehouse_tls_certificate_expiry_timestamp_seconds{'));
    assert.ok(
      lines.some((l) =>
        l.includes('source="Secret default/shop-cert",role="serves",subject="O=Gatehouse Tests, CN=shop.test"'),
      ),
      lines.join('\n'),
    );
    assert.equal(lines.length, 5, lines.join('\n'));
  });

  it('shows the certificates in service on the diag page, by subject, issuer, names and validity, never a key', async () => {
    const res = await runCurl([`http://127.0.0.1:${rig.port}/gateway/v0/diag/?json=true`]);
    assert.equal(res.status, 200, res.body);
    const certificates = (JSON.parse(res.body) as { certificates?: Record<string, unknown>[] }).certificates ?? [];
    const shop = certificates.find((c) => c.source === 'Secret default/shop-cert');
    assert.deepEqual(
      shop && [shop.role, shop.usedBy, shop.subject, shop.issuer, shop.names],
      ['serves', ['Host shop'], 'O=Gatehouse Tests, CN=shop.test', 'CN=Port CA', ['shop.test']],
      JSON.stringify(certificates),
    );
    assert.ok(Date.parse(String(shop?.validTo)) > Date.now());
    assert.doesNotMatch(res.body, /PRIVATE KEY|LS0tLS1CRUdJTi/);
    const page = await runCurl([`http://127.0.0.1:${rig.port}/gateway/v0/diag/`]);
    assert.match(page.body, /<h2 id="certificates">Certificates<\/h2>/);
    assert.match(page.body, /<td><code>Secret default\/shop-cert<\/code><\/td><td>serves<\/td><td>Host shop<\/td>/);
  });
});
