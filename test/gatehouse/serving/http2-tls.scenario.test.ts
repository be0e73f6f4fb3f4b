import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import https from 'node:https';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { listen, type RunningServer } from '../../../src/gatehouse';
import { CertificateFolder, type Issued } from '../../support/certificates';
import { h2Send } from '../../support/http2-client';

const run = promisify(execFile);

/** The protocol ALPN chose and the subject of the certificate served, for a handshake naming `servername`. */
async function handshake(
  port: number,
  servername: string | undefined,
  ALPNProtocols?: string[],
): Promise<{ alpn: string | false; subject: string }> {
  const socket = tls.connect({ host: '127.0.0.1', port, servername, ALPNProtocols, rejectUnauthorized: false });
  try {
    await once(socket, 'secureConnect');
    return { alpn: socket.alpnProtocol ?? false, subject: String(socket.getPeerCertificate().subject.CN) };
  } finally {
    socket.destroy();
  }
}

describe('gatehouse/serving over TLS: HTTP/2 and HTTP/1.1 by ALPN', () => {
  const certs = new CertificateFolder();
  let ca: Issued;
  let files: { cert: string; key: string };
  let server: RunningServer;
  let base = '';

  before(async () => {
    ca = await certs.authority('ALPN CA');
    const localhost = await certs.issue(ca, { cn: 'localhost', names: ['localhost', 'IP:127.0.0.1'] });
    files = { cert: localhost.certFile, key: localhost.keyFile };
    server = await listen((req, res) => res.end(`${req.httpVersion} ${req.headers.host}`), {
      host: '127.0.0.1',
      port: 0,
      tls: files,
    });
    base = `https://127.0.0.1:${server.port}`;
  });
  after(async () => {
    await server?.close(0);
    certs.remove();
  });

  it('offers h2 and http/1.1, h2 first', async () => {
    assert.equal((await handshake(server.port, 'localhost', ['http/1.1', 'h2'])).alpn, 'h2');
    assert.equal((await handshake(server.port, 'localhost', ['http/1.1'])).alpn, 'http/1.1');
  });

  it('serves HTTP/2 to a client that chose h2, and HTTP/1.1 to one that chose http/1.1 or said nothing', async () => {
    const h2 = await h2Send(base, '/', { ca: ca.cert });
    assert.match(h2.text, /^2\.0 /);
    const h1 = await new Promise<string>((resolve, reject) => {
      https
        .get(`${base}/`, { ca: ca.cert, agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(text));
        })
        .on('error', reject);
    });
    assert.equal(h1, `1.1 127.0.0.1:${server.port}`);
    assert.equal((await handshake(server.port, 'localhost')).alpn, false);
  });

  it('answers curl --http2 over HTTP/2, and curl --http1.1 over HTTP/1.1', async () => {
    const curl = (flag: string) =>
      run('curl', ['-s', flag, '--cacert', ca.certFile, '-w', ' %{http_version}', `https://localhost:${server.port}/`]);
    assert.equal((await curl('--http2')).stdout, `2.0 localhost:${server.port} 2`);
    assert.equal((await curl('--http1.1')).stdout, `1.1 localhost:${server.port} 1.1`);
  });

  it('serves the context of the name a client asks for: exact, then the longest wildcard, then the default', async () => {
    const exact = await certs.issue(ca, { cn: 'api.example.test' });
    const wildcard = await certs.issue(ca, { cn: 'wild.example.test', names: ['*.example.test'] });
    const contexts = server.tlsContexts!;
    contexts.set('API.example.test', { context: tls.createSecureContext(exact) });
    contexts.set('*.example.test', { context: tls.createSecureContext(wildcard), alpn: ['http/1.1'] });
    try {
      assert.deepEqual(await handshake(server.port, 'api.example.test', ['h2', 'http/1.1']), {
        alpn: 'h2',
        subject: 'api.example.test',
      });
      // The wildcard's context offers http/1.1 alone.
      assert.deepEqual(await handshake(server.port, 'www.example.test', ['h2', 'http/1.1']), {
        alpn: 'http/1.1',
        subject: 'wild.example.test',
      });
      assert.equal((await handshake(server.port, 'a.b.example.test')).subject, 'wild.example.test');
      assert.equal((await handshake(server.port, 'other.test')).subject, 'localhost');
      assert.equal((await handshake(server.port, undefined)).subject, 'localhost');
    } finally {
      contexts.delete('api.example.test');
      contexts.delete('*.example.test');
    }
    assert.equal((await handshake(server.port, 'api.example.test')).subject, 'localhost');
  });

  it('offers http/1.1 alone with HTTP/2 off', async () => {
    const plain = await listen((_req, res) => res.end('ok'), {
      host: '127.0.0.1',
      port: 0,
      tls: files,
      http2: false,
    });
    try {
      assert.equal((await handshake(plain.port, 'localhost', ['h2', 'http/1.1'])).alpn, 'http/1.1');
    } finally {
      await plain.close(0);
    }
  });
});
