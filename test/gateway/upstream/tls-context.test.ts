/**
 * @module test/gateway/upstream/tls-context
 * Upstreams called with a TLSContext: an HTTPS upstream that requires a
 * client certificate gets the context's, is checked against the context's
 * authorities under the context's `sni`, and refuses a call without it; the
 * same for an AuthService over HTTPS or gRPC and a RateLimitService over
 * gRPC with TLS.
 */
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { once } from 'node:events';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import request from 'supertest';
import { caSecret, tlsSecret, type Issued } from '../../support/certificates';
import { startExtAuthzServer } from '../../support/ext-authz-server';
import { echoModule, registry } from '../../support/modules';
import { documents, resource, TlsConfigFolder } from '../../support/tls-config';

/** An HTTPS server that requires a client certificate of `clients`, answering with its name and the SNI it was sent. */
async function mutualServer(pair: Issued, clients: Issued, answer?: (res: import('node:http').ServerResponse) => void) {
  const server = https.createServer(
    { cert: pair.cert, key: pair.key, ca: clients.cert, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      if (answer) return answer(res);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ client: socket.getPeerCertificate().subject.CN, servername: socket.servername }));
    },
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

describe('upstreams called with a TLSContext', function () {
  const folder = new TlsConfigFolder();
  let serverCa: Issued;
  let clientCa: Issued;
  let otherCa: Issued;
  let gatewayClient: Issued;
  let backend: Awaited<ReturnType<typeof mutualServer>>;
  let auth: Awaited<ReturnType<typeof mutualServer>>;

  const secrets = () =>
    documents(
      tlsSecret('gateway-client', gatewayClient),
      caSecret('upstream-ca', serverCa),
      caSecret('other-ca', otherCa),
      resource('TLSContext', 'upstream', { secret: 'gateway-client', ca_secret: 'upstream-ca', sni: 'backend.test' }),
      resource('TLSContext', 'untrusting', { secret: 'gateway-client', ca_secret: 'other-ca', sni: 'backend.test' }),
      resource('TLSContext', 'no-certificate', { ca_secret: 'upstream-ca', sni: 'backend.test' }),
      resource('TLSContext', 'misnamed', { secret: 'gateway-client', ca_secret: 'upstream-ca', sni: 'elsewhere.test' }),
    );

  before(async () => {
    serverCa = await folder.certs.authority('Upstream CA');
    clientCa = await folder.certs.authority('Gateway Clients CA');
    otherCa = await folder.certs.authority('Other CA');
    const serverPair = await folder.certs.issue(serverCa, { cn: 'backend.test', names: ['backend.test'] });
    gatewayClient = await folder.certs.issue(clientCa, { cn: 'gateway client', client: true, file: 'gateway-client' });
    backend = await mutualServer(serverPair, clientCa);
    auth = await mutualServer(serverPair, clientCa, (res) => res.writeHead(200, { 'x-travel-user': 'alice' }).end());
  });
  after(async () => {
    backend?.server.close();
    auth?.server.close();
    folder.remove();
  });

  it("presents the context's client certificate, under its sni, to an upstream that requires one", async () => {
    const gateway = await folder.gateway(
      documents(
        secrets(),
        resource('Mapping', 'backend', { prefix: '/', service: `127.0.0.1:${backend.port}`, tls: 'upstream' }),
      ),
    );
    const res = await request(gateway.app.callback()).get('/x');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { client: 'gateway client', servername: 'backend.test' });
    assert.match(gateway.snapshot().routes[0].cluster ?? '', /_otls$/);
    await gateway.close();
  });

  it('gets no answer from that upstream without a client certificate, nor from one its authorities do not vouch for or that is not its sni', async () => {
    for (const tls of ['no-certificate', 'untrusting', 'misnamed']) {
      const gateway = await folder.gateway(
        documents(
          secrets(),
          resource('Mapping', 'backend', { prefix: '/', service: `127.0.0.1:${backend.port}`, tls }),
        ),
      );
      const res = await request(gateway.app.callback()).get('/x');
      assert.ok([502, 503].includes(res.status), `${tls}: ${res.status} ${JSON.stringify(res.body)}`);
      await gateway.close();
    }
  });

  it('asks an AuthService over HTTPS with its TLSContext', async () => {
    const gateway = await folder.gateway(
      documents(
        secrets(),
        resource('AuthService', 'auth', {
          auth_service: `127.0.0.1:${auth.port}`,
          tls: 'upstream',
          allowed_authorization_headers: ['x-travel-user'],
        }),
        resource('Mapping', 'echo', { prefix: '/', service: 'echo' }),
      ),
      { modules: registry(echoModule('echo')) },
    );
    const res = await request(gateway.app.callback()).get('/x');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.headers['x-travel-user'], 'alice');
    await gateway.close();
  });

  it('asks a gRPC AuthService (proto: grpc) over TLS with its TLSContext, and is refused without its certificate', async () => {
    // Its certificate names backend.test alone: the call is checked under the context's sni, not 127.0.0.1.
    const serverPair = await folder.certs.issue(serverCa, {
      cn: 'ext-authz',
      names: ['backend.test'],
      file: 'ext-authz',
    });
    const extAuthz = await startExtAuthzServer({ key: serverPair.key, cert: serverPair.cert, clientCa: clientCa.cert });
    try {
      for (const [tls, status] of [
        ['upstream', 200],
        ['no-certificate', 403],
      ] as const) {
        const gateway = await folder.gateway(
          documents(
            secrets(),
            resource('AuthService', 'auth', { auth_service: extAuthz.address, proto: 'grpc', tls, timeout_ms: 5000 }),
            resource('Mapping', 'echo', { prefix: '/', service: 'echo' }),
          ),
          { modules: registry(echoModule('echo')) },
        );
        const res = await request(gateway.app.callback()).get('/x');
        assert.equal(res.status, status, `${tls}: ${JSON.stringify(res.body)}`);
        if (status === 200) assert.equal(res.body.headers['x-travel-user'], 'alice');
        await gateway.close();
      }
      assert.equal(extAuthz.received.length, 1);
    } finally {
      await extAuthz.close();
    }
  });

  it('asks a RateLimitService over gRPC with TLS and its TLSContext', async () => {
    const def = protoLoader.loadSync('envoy/service/ratelimit/v3/rls.proto', {
      keepCase: true,
      defaults: true,
      enums: String,
      includeDirs: [path.join(__dirname, '..', '..', '..', 'proto')],
    });
    const server = new grpc.Server();
    let calls = 0;
    server.addService(def['envoy.service.ratelimit.v3.RateLimitService'] as grpc.ServiceDefinition, {
      ShouldRateLimit(_call: unknown, callback: grpc.sendUnaryData<object>) {
        calls++;
        callback(null, { overall_code: 'OVER_LIMIT' });
      },
    });
    const serverPair = await folder.certs.issue(serverCa, { cn: 'limits', names: ['backend.test'], file: 'limits' });
    const credentials = grpc.ServerCredentials.createSsl(
      clientCa.cert,
      [{ cert_chain: serverPair.cert, private_key: serverPair.key }],
      true,
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', credentials, (err, p) => (err ? reject(err) : resolve(p))),
    );
    try {
      const gateway = await folder.gateway(
        documents(
          secrets(),
          resource('RateLimitService', 'limits', {
            service: `127.0.0.1:${port}`,
            tls: 'upstream',
            timeout_ms: 5000,
            failure_mode_deny: true,
          }),
          'apiVersion: getambassador.io/v3alpha1\nkind: Mapping\nmetadata: {name: echo}\nspec:\n  prefix: /\n  service: echo\n  labels: {ambassador: [{request_label_group: [{generic_key: {value: all}}]}]}\n',
        ),
        { modules: registry(echoModule('echo')) },
      );
      const res = await request(gateway.app.callback()).get('/x');
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(calls, 1);
      await gateway.close();
    } finally {
      server.forceShutdown();
    }
  });
});
