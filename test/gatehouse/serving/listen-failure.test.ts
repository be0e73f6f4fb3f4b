import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { listen, listenFailure, readTlsFiles } from '../../../src/gatehouse';

/** A self-signed certificate and its key, as an operator makes them with openssl. */
async function selfSigned(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-days',
    '1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  return { cert, key };
}

describe('gatehouse/serving/listen-failure', function () {
  describe('a port that cannot be listened on', () => {
    it('names the address and says it is in use, for a port another process holds', async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as net.AddressInfo).port;
      try {
        await assert.rejects(
          listen(() => undefined, { host: '127.0.0.1', port }),
          {
            message: `cannot listen for HTTP on 127.0.0.1:${port}: the address is already in use (another process listens on that port)`,
          },
        );
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });

    it('says so for an address no interface of the machine has, and a host name that does not resolve', async () => {
      await assert.rejects(
        listen(() => undefined, { host: '192.0.2.1', port: 0 }),
        {
          message: 'cannot listen for HTTP on 192.0.2.1:0: no network interface of this machine has that address',
        },
      );
      await assert.rejects(
        listen(() => undefined, { host: 'no-such-host.invalid', port: 0 }),
        {
          message: 'cannot listen for HTTP on no-such-host.invalid:0: the host name does not resolve',
        },
      );
    });

    it("reads the reason out of grpc-js's message, which carries no code", () => {
      const grpc = new Error(
        'No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:8081]',
      );
      assert.equal(
        listenFailure(grpc, 'gRPC', '127.0.0.1', 8081).message,
        'cannot listen for gRPC on 127.0.0.1:8081: the address is already in use (another process listens on that port)',
      );
      assert.equal(
        listenFailure(new Error('something else'), 'gRPC', '::1', 1).message,
        'cannot listen for gRPC on [::1]:1: something else',
      );
    });
  });

  describe('TLS files', () => {
    let dir: string;
    let good: { cert: string; key: string };
    let other: { cert: string; key: string };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-files-'));
      [good, other] = await Promise.all([selfSigned(dir, 'good'), selfSigned(dir, 'other')]);
    });

    after(() => rmSync(dir, { recursive: true, force: true }));

    it('reads a certificate and its key', () => {
      const files = readTlsFiles(good);
      assert.match(files.cert.toString(), /BEGIN CERTIFICATE/);
      assert.match(files.key.toString(), /PRIVATE KEY/);
    });

    it('names the file that is missing or is a folder', () => {
      assert.throws(() => readTlsFiles({ cert: good.cert, key: join(dir, 'nope.key') }), {
        message: `cannot read the TLS key ${join(dir, 'nope.key')}: no such file`,
      });
      const folder = join(dir, 'folder');
      mkdirSync(folder);
      assert.throws(() => readTlsFiles({ cert: folder, key: good.key }), {
        message: `cannot read the TLS certificate ${folder}: it is a folder, not a file`,
      });
    });

    it('names the file that holds no certificate, or no key, such as the two given the wrong way round', () => {
      assert.throws(() => readTlsFiles({ cert: good.key, key: good.cert }), {
        message: `the TLS certificate ${good.key} holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)`,
      });
      assert.throws(() => readTlsFiles({ cert: good.cert, key: good.cert }), {
        message: `the TLS key ${good.cert} holds no private key in PEM form (-----BEGIN PRIVATE KEY-----)`,
      });
    });

    it("says when the key is not the certificate's", () => {
      assert.throws(() => readTlsFiles({ cert: good.cert, key: other.key }), {
        message: `the TLS key ${other.key} is not the key of the certificate ${good.cert}`,
      });
    });

    it('says when the key is encrypted, which a server started unattended cannot open', async () => {
      const encrypted = join(dir, 'encrypted.key');
      await promisify(execFile)('openssl', [
        'pkey',
        '-in',
        good.key,
        '-aes256',
        '-passout',
        'pass:secret',
        '-out',
        encrypted,
      ]);
      assert.throws(
        () => readTlsFiles({ cert: good.cert, key: encrypted }),
        /^Error: the TLS key .*encrypted\.key is encrypted: give the key without its passphrase/,
      );
    });

    it('makes listen refuse with the same words, before it listens', async () => {
      writeFileSync(join(dir, 'empty.crt'), '');
      await assert.rejects(
        listen(() => undefined, { host: '127.0.0.1', port: 0, tls: { cert: join(dir, 'empty.crt'), key: good.key } }),
        {
          message: `the TLS certificate ${join(dir, 'empty.crt')} holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)`,
        },
      );
    });
  });
});
