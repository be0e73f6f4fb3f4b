/**
 * @module test/gatehouse/certificate-rotation
 * Certificates renewed while the gateway serves: a changed Secret in the
 * config folder, or a changed file a TLSContext names, is served to new
 * connections within seconds, without a restart, and a connection already
 * open is not cut; a renewal that cannot be served is refused with the
 * reason and the certificate in service kept. The HTTPS port opens with the
 * first certificate a reload brings, and closes with the last.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { CertificateFolder, tlsSecret, type Issued } from '../support/certificates';
import { documents, resource } from '../support/tls-config';
import { eventually } from '../support/polling';
import { recordingUpstream, runSClient, startTlsRig, type RecordingUpstream, type TlsRig } from '../support/tls-rig';

/** GET / on `agent`'s connection to `name`, resolving the common name of the certificate that connection was served. */
function getOn(agent: https.Agent, port: number, name: string, ca: Buffer): Promise<{ status: number; cn: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      { host: '127.0.0.1', port, servername: name, headers: { host: name }, agent, ca, path: '/' },
      (res) => {
        const cn = String((res.socket as TLSSocket).getPeerCertificate().subject.CN);
        res.resume().on('end', () => resolve({ status: res.statusCode!, cn }));
      },
    );
    req.on('error', reject);
  });
}

describe('certificates renewed while the gateway serves', function () {
  const certs = new CertificateFolder();
  let ca: Issued;
  let first: Issued;
  let renewed: Issued;
  let upstream: RecordingUpstream;
  let rig: TlsRig;

  const served = async (name: string) => (await runSClient(rig.httpsPort()!, ['-servername', name])).subject;

  before(async () => {
    ca = await certs.authority('Rotation CA');
    first = await certs.issue(ca, { cn: 'first', names: ['shop.test', 'files.test'] });
    renewed = await certs.issue(ca, { cn: 'renewed', names: ['shop.test', 'files.test'] });
    upstream = await recordingUpstream();
    writeFileSync(join(certs.dir, 'files.pem'), first.cert);
    writeFileSync(join(certs.dir, 'files.key'), first.key);
    rig = await startTlsRig(
      {
        'secrets.yaml': tlsSecret('shop-cert', first),
        'hosts.yaml': documents(
          resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
          resource('TLSContext', 'files', {
            hosts: ['files.test'],
            cert_chain_file: join(certs.dir, 'files.pem'),
            private_key_file: join(certs.dir, 'files.key'),
          }),
          resource('Mapping', 'all', { prefix: '/', service: upstream.address, hostname: '*' }),
        ),
      },
      { watch: true },
    );
  });
  after(async () => {
    await rig?.stop();
    await upstream?.close();
    certs.remove();
  });

  it('serves a changed Secret to new connections, without cutting one already open', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const port = rig.httpsPort()!;
      assert.deepEqual(await getOn(agent, port, 'shop.test', ca.cert), { status: 200, cn: 'first' });
      rig.write('secrets.yaml', tlsSecret('shop-cert', renewed));
      await eventually(
        async () => ((await served('shop.test')) === 'O = Gatehouse Tests, CN = renewed' ? true : undefined),
        'the renewed certificate',
      );
      // The connection opened before keeps its certificate, and is served on.
      assert.deepEqual(await getOn(agent, port, 'shop.test', ca.cert), { status: 200, cn: 'first' });
    } finally {
      agent.destroy();
    }
  });

  it('serves changed certificate files a TLSContext names to new connections', async () => {
    assert.equal(await served('files.test'), 'O = Gatehouse Tests, CN = first');
    writeFileSync(join(certs.dir, 'files.key'), renewed.key);
    writeFileSync(join(certs.dir, 'files.pem'), renewed.cert);
    await eventually(
      async () => ((await served('files.test')) === 'O = Gatehouse Tests, CN = renewed' ? true : undefined),
      'the renewed files',
    );
  });

  it("refuses a renewal whose key is not its certificate's, naming the Secret and field, and keeps serving the last good one", async () => {
    rig.write('secrets.yaml', tlsSecret('shop-cert', { cert: first.cert, key: renewed.key }));
    const outcome = await rig.gatehouse.reload();
    assert.equal(outcome.ok, false);
    assert.match(
      outcome.ok ? '' : outcome.problems.join('\n'),
      /secrets\.yaml: Secret shop-cert: data\.tls\.key: is not the key of the certificate \(O=Gatehouse Tests, CN=first\)/,
    );
    assert.equal(await served('shop.test'), 'O = Gatehouse Tests, CN = renewed');
    assert.doesNotMatch(rig.log.raw.join(''), /PRIVATE KEY|LS0tLS1CRUdJTi/);
    rig.write('secrets.yaml', tlsSecret('shop-cert', renewed));
    assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
  });

  it('closes the HTTPS port with the last certificate, and opens it again with the next', async () => {
    rig.write('hosts.yaml', resource('Mapping', 'all', { prefix: '/', service: upstream.address }));
    assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
    await eventually(async () => (rig.httpsPort() === undefined ? true : undefined), 'the HTTPS port to close');
    rig.write(
      'hosts.yaml',
      documents(
        resource('Host', 'shop', { hostname: 'shop.test', tlsSecret: { name: 'shop-cert' } }),
        resource('Mapping', 'all', { prefix: '/', service: upstream.address, hostname: '*' }),
      ),
    );
    assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
    await eventually(async () => (rig.httpsPort() !== undefined ? true : undefined), 'the HTTPS port to open');
    assert.equal(await served('shop.test'), 'O = Gatehouse Tests, CN = renewed');
  });
});
