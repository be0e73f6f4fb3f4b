/**
 * @module test/platform/node-tls
 * What src/platform/node-tls relies on in Node's TLS server, checked
 * against the Node running the tests: an SNICallback is called as a
 * method of the connection, a connection can be asked for a client
 * certificate from there, and the server's `requestCert` and
 * `rejectUnauthorized` are read at each connection.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { askClientCertificate, askEveryClient, NODE_TLS_WRITTEN_FOR, sniConnection } from '../../src/platform';
import { CertificateFolder, type Issued } from '../support/certificates';
import { relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('node', NODE_TLS_WRITTEN_FOR, what, holds, detail);

/** Connects as a client (with `client`'s certificate, if given) and resolves whether the server took the connection. */
function connect(port: number, servername: string | undefined, ca: Buffer, client?: Issued): Promise<{ ok: boolean }> {
  return new Promise((resolve) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      ca,
      // An empty name sends no SNI.
      servername: servername ?? '',
      checkServerIdentity: () => undefined,
      ...(client ? { cert: client.cert, key: client.key } : {}),
    });
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      socket.destroy();
      resolve({ ok: text === 'ok' });
    });
    socket.on('error', () => resolve({ ok: false }));
    socket.on('close', () => resolve({ ok: false }));
  });
}

describe('Node TLS, as src/platform/node-tls relies on it', function () {
  const certs = new CertificateFolder();
  let ca: Issued;
  let serverPair: Issued;
  let client: Issued;
  let server: tls.Server;
  let port: number;
  const calledOn: unknown[] = [];
  const requested: boolean[] = [];

  before(async () => {
    ca = await certs.authority('Platform CA');
    serverPair = await certs.issue(ca, { cn: 'platform.test', names: ['strict.test', 'open.test'] });
    client = await certs.issue(ca, { cn: 'client', client: true });
    const context = tls.createSecureContext({ cert: serverPair.cert, key: serverPair.key, ca: ca.cert });
    server = tls.createServer(
      {
        cert: serverPair.cert,
        key: serverPair.key,
        ca: ca.cert,
        SNICallback(this: unknown, name: string, done: (err: Error | null, ctx?: tls.SecureContext) => void) {
          calledOn.push(this);
          const socket = sniConnection(this);
          if (socket !== undefined) askClientCertificate(socket, name === 'strict.test', name === 'strict.test');
          done(null, context);
        },
      },
      (socket) => {
        requested.push(socket.authorized);
        socket.end('ok');
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server?.close();
    certs.remove();
  });

  it('calls an SNICallback as a method of the connection', async () => {
    await connect(port, 'open.test', ca.cert);
    rely('calls SNICallback with the TLSSocket as this', calledOn.at(-1) instanceof tls.TLSSocket);
    rely('gives the TLSSocket of SNICallback its handle', sniConnection(calledOn.at(-1)) !== undefined);
  });

  it('asks one connection for a client certificate, chosen by its name', async () => {
    const open = await connect(port, 'open.test', ca.cert);
    rely('leaves a connection unasked when SNICallback does not ask', open.ok);
    const refused = await connect(port, 'strict.test', ca.cert);
    rely('ends a handshake without the certificate asked for from SNICallback', !refused.ok);
    const taken = await connect(port, 'strict.test', ca.cert, client);
    rely('takes a client certificate asked for from SNICallback', taken.ok);
    rely('marks the connection authorized', requested.at(-1) === true);
  });

  it("reads the server's requestCert and rejectUnauthorized at each connection", async () => {
    askEveryClient(server, true, true);
    try {
      const refused = await connect(port, undefined, ca.cert);
      rely('asks a connection without SNI as the server says at that moment', !refused.ok);
      const taken = await connect(port, undefined, ca.cert, client);
      rely('takes its certificate', taken.ok);
    } finally {
      askEveryClient(server, false, false);
    }
    const open = await connect(port, undefined, ca.cert);
    rely('stops asking once the server says so', open.ok);
  });
});
