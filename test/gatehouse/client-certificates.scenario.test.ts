/**
 * @module test/gatehouse/client-certificates
 * Client certificates on the HTTPS port, with real clients: a Host whose
 * TLS context requires one refuses a handshake without a certificate its
 * authorities vouch for (openssl s_client, curl --cert); one that asks
 * without requiring takes either; and the upstream is told of the
 * certificate in Envoy's X-Forwarded-Client-Cert, as the Module's
 * forward_client_cert_details says, a client's own header never passing
 * for the gateway's.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { caSecret, CertificateFolder, tlsSecret, type Issued } from '../support/certificates';
import { documents, resource } from '../support/tls-config';
import {
  runCurl,
  recordingUpstream,
  runSClient,
  startTlsRig,
  type RecordingUpstream,
  type TlsRig,
} from '../support/tls-rig';

const moduleOf = (config: Record<string, unknown>) => resource('Module', 'ambassador', { config });

describe('client certificates on the HTTPS port', function () {
  const certs = new CertificateFolder();
  let ca: Issued;
  let client: Issued;
  let stranger: Issued;
  let upstream: RecordingUpstream;
  let rig: TlsRig;
  let port: number;

  /** curl to `host` on the HTTPS port, with `extra` arguments. */
  const to = (host: string, ...extra: string[]) =>
    runCurl(['--cacert', ca.certFile, '--resolve', `${host}:${port}:127.0.0.1`, ...extra, `https://${host}:${port}/`]);
  const withCert = (who: Issued) => ['--cert', who.certFile, '--key', who.keyFile];

  before(async () => {
    ca = await certs.authority('Clients CA');
    const server = await certs.issue(ca, {
      cn: 'gateway',
      names: ['mtls.test', 'optional.test', 'open.test'],
      uri: 'spiffe://cluster.local/ns/edge/sa/gatehouse',
    });
    client = await certs.issue(ca, {
      cn: 'client one',
      client: true,
      file: 'client',
      names: ['client.test'],
      uri: 'spiffe://cluster.local/ns/shop/sa/basket',
    });
    const otherCa = await certs.authority('Stranger CA');
    stranger = await certs.issue(otherCa, { cn: 'stranger', client: true });
    upstream = await recordingUpstream();
    rig = await startTlsRig({
      'tls.yaml': documents(
        tlsSecret('server-cert', server),
        caSecret('clients', ca),
        resource('Host', 'mtls', {
          hostname: 'mtls.test',
          tlsSecret: { name: 'server-cert' },
          tls: { ca_secret: 'clients', cert_required: true },
        }),
        resource('Host', 'optional', {
          hostname: 'optional.test',
          tlsSecret: { name: 'server-cert' },
          tlsContext: { name: 'optional' },
        }),
        resource('TLSContext', 'optional', { ca_secret: 'clients' }),
        resource('Host', 'open', { hostname: 'open.test', tlsSecret: { name: 'server-cert' } }),
        resource('Mapping', 'all', { prefix: '/', service: upstream.address, hostname: '*' }),
      ),
      'module.yaml': moduleOf({
        forward_client_cert_details: 'SANITIZE_SET',
        set_current_client_cert_details: { subject: true, uri: true, dns: true },
      }),
    });
    port = rig.httpsPort()!;
  });
  after(async () => {
    await rig?.stop();
    await upstream?.close();
    certs.remove();
  });

  it('refuses a handshake without a client certificate where the context requires one (openssl s_client)', async () => {
    const get = 'GET / HTTP/1.1\r\nHost: mtls.test\r\nConnection: close\r\n\r\n';
    const without = await runSClient(port, ['-servername', 'mtls.test'], get);
    assert.match(without.output, /alert certificate required/, without.output);
    assert.doesNotMatch(without.output, /HTTP\/1\.1 200/);
    const withOne = await runSClient(
      port,
      ['-servername', 'mtls.test', '-cert', client.certFile, '-key', client.keyFile],
      get,
    );
    assert.doesNotMatch(withOne.output, /alert/);
    assert.match(withOne.output, /HTTP\/1\.1 200 OK/);
    assert.match(withOne.output, /Acceptable client certificate CA names\nCN = Clients CA/);
  });

  it('serves a client whose certificate its authorities vouch for (curl --cert), and no other', async () => {
    assert.equal((await to('mtls.test', ...withCert(client))).status, 200);
    const none = await to('mtls.test');
    assert.equal(none.status, 0, 'no answer without a certificate');
    assert.notEqual(none.code, 0);
    const strange = await to('mtls.test', ...withCert(stranger));
    assert.equal(strange.status, 0, 'no answer to a certificate of other authorities');
  });

  it('answers 421 to a request for a host that asks for a client certificate on a connection made for another name', async () => {
    const asking = upstream.count();
    for (const fronted of [
      await to('open.test', '-H', 'Host: mtls.test'),
      await to('open.test', '--http2', '-H', 'Host: mtls.test'),
      await to('optional.test', ...withCert(stranger), '-H', 'Host: mtls.test'),
      await to('open.test', '-H', 'Host: optional.test'),
      await runCurl(['-k', ...withCert(client), '-H', 'Host: optional.test', `https://127.0.0.1:${port}/`]),
    ]) {
      assert.equal(fronted.status, 421, fronted.stderr);
      assert.match(fronted.body, /"detail":"this connection was made for another name than (mtls|optional)\.test/);
    }
    assert.equal(upstream.count(), asking, 'the upstream was asked nothing');
    assert.equal((await to('mtls.test', ...withCert(client), '-H', 'Host: open.test')).status, 200);
    assert.equal((await to('mtls.test', ...withCert(client))).status, 200);
  });

  it("tells the upstream of the verified certificate in Envoy's X-Forwarded-Client-Cert", async () => {
    await to('mtls.test', ...withCert(client));
    const hash = new X509Certificate(client.cert).fingerprint256.replace(/:/g, '').toLowerCase();
    assert.equal(
      upstream.last()?.['x-forwarded-client-cert'],
      `By=spiffe://cluster.local/ns/edge/sa/gatehouse;Hash=${hash};Subject="CN=client one,O=Gatehouse Tests";URI=spiffe://cluster.local/ns/shop/sa/basket;DNS=client.test`,
    );
  });

  it('takes a client with or without a certificate where the context asks without requiring one', async () => {
    const without = await to('optional.test');
    assert.equal(without.status, 200);
    assert.equal(upstream.last()?.['x-forwarded-client-cert'], undefined);
    assert.equal((await to('optional.test', ...withCert(client))).status, 200);
    assert.match(String(upstream.last()?.['x-forwarded-client-cert']), /Subject="CN=client one,O=Gatehouse Tests"/);
  });

  it("drops a client's own X-Forwarded-Client-Cert, over cleartext and TLS, certificate or not", async () => {
    const claim = ['-H', 'X-Forwarded-Client-Cert: By=spiffe://evil;Hash=00;Subject="CN=admin"'];
    assert.equal((await to('open.test', ...claim)).status, 200);
    assert.equal(upstream.last()?.['x-forwarded-client-cert'], undefined);
    await to('mtls.test', ...withCert(client), ...claim);
    assert.doesNotMatch(String(upstream.last()?.['x-forwarded-client-cert']), /evil|admin/);
    assert.equal((await runCurl([...claim, '-H', 'Host: open.test', `http://127.0.0.1:${rig.port}/`])).status, 301);
  });

  it("appends to a verified client's own header with APPEND_FORWARD, and drops an unverified client's", async () => {
    rig.write('module.yaml', moduleOf({ forward_client_cert_details: 'APPEND_FORWARD' }));
    assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
    const claim = ['-H', 'X-Forwarded-Client-Cert: By=spiffe://front;Hash=aa'];
    await to('mtls.test', ...withCert(client), ...claim);
    const hash = new X509Certificate(client.cert).fingerprint256.replace(/:/g, '').toLowerCase();
    assert.equal(
      upstream.last()?.['x-forwarded-client-cert'],
      `By=spiffe://front;Hash=aa,By=spiffe://cluster.local/ns/edge/sa/gatehouse;Hash=${hash}`,
    );
    await to('open.test', ...claim);
    assert.equal(upstream.last()?.['x-forwarded-client-cert'], undefined);
  });
});
