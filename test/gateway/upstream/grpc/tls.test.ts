/**
 * A gRPC upstream over TLS (h2 by ALPN), written as an Emissary Mapping
 * with `grpc: true` and a TLSContext: the gateway checks the upstream's
 * certificate against the context's authority under its `sni`, and the
 * call passes; a context that trusts another authority makes the upstream
 * unreachable, UNAVAILABLE.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { listen, type RunningServer } from '../../../../src/gatehouse';
import type { Gateway } from '../../../../src/gateway';
import { caSecret, type Issued } from '../../../support/certificates';
import { echoClient, startEchoServer, unary, type EchoServer } from '../../../support/grpc-echo';
import { documents, resource, TlsConfigFolder } from '../../../support/tls-config';

describe('a gRPC upstream over TLS', () => {
  const folder = new TlsConfigFolder();
  let upstream: EchoServer;
  let gateway: Gateway;
  let server: RunningServer;

  before(async () => {
    const ca: Issued = await folder.certs.authority('Upstream CA');
    const other: Issued = await folder.certs.authority('Other CA');
    const pair = await folder.certs.issue(ca, { cn: 'backend.test', names: ['backend.test'] });
    upstream = await startEchoServer(
      grpc.ServerCredentials.createSsl(null, [{ private_key: pair.key, cert_chain: pair.cert }]),
    );
    gateway = await folder.gateway(
      documents(
        caSecret('upstream-ca', ca),
        caSecret('other-ca', other),
        resource('TLSContext', 'upstream', { ca_secret: 'upstream-ca', sni: 'backend.test' }),
        resource('TLSContext', 'untrusting', { ca_secret: 'other-ca', sni: 'backend.test' }),
        resource('Mapping', 'echo', {
          prefix: '/test.Echo/',
          rewrite: '',
          service: upstream.address,
          tls: 'upstream',
          grpc: true,
        }),
        resource('Mapping', 'untrusted', {
          prefix: '/other.Echo/',
          rewrite: '/test.Echo/',
          service: upstream.address,
          tls: 'untrusting',
          grpc: true,
        }),
      ),
    );
    server = await listen(gateway.app.callback(), { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await server?.close(0);
    await gateway?.close();
    await upstream?.close();
    folder.remove();
  });

  it('passes a call to an upstream whose certificate the TLSContext trusts', async () => {
    const client = echoClient(`127.0.0.1:${server.port}`);
    const outcome = await unary(client, { text: 'secret' });
    client.close();
    assert.equal(outcome.status.code, grpc.status.OK, outcome.status.details);
    assert.equal(outcome.answer?.text, 'secret');
    assert.deepEqual(outcome.status.metadata.get('x-server-trailer'), ['bye']);
  });

  it('answers UNAVAILABLE when the upstream presents a certificate the context does not trust', async () => {
    const c = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const status = await new Promise<grpc.StatusObject>((resolve) => {
      const same = (v: Buffer) => v;
      const call = c.makeUnaryRequest('/other.Echo/Unary', same, same, Buffer.from('{}'), () => c.close());
      call.on('status', resolve);
    });
    assert.equal(status.code, grpc.status.UNAVAILABLE);
    assert.equal(upstream.received.length, 1);
  });
});
