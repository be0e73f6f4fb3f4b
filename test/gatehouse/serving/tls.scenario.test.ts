import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { killAll, startCli, type CliServer } from '../../support/process';
import { ALICE } from '../../support/credentials';
import { DEMO_CONFIG } from '../../support/config-folder';

/** GET over HTTPS, trusting `ca` (undefined: the system's roots only). */
function get(port: number, path: string, ca: Buffer | undefined, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, ca, headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

describe('gatehouse over HTTPS', function () {
  let dir: string;
  let cert: Buffer;
  let gatehouse: CliServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-days',
      '1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]);
    cert = readFileSync(certFile);
    gatehouse = await startCli(['start'], {
      env: {
        PORT: '0',
        GRPC_PORT: '0',
        GATEHOUSE_CONFIG: DEMO_CONFIG,
        TLS_CERT: certFile,
        TLS_KEY: keyFile,
        LOG_LEVEL: 'warn',
      },
    });
  });

  after(async () => {
    await gatehouse?.stop();
    await killAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('announces an https URL', () => {
    assert.match(gatehouse.address, /^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('serves a client that trusts the certificate, with https in the absolute URLs of its bodies', async () => {
    const res = await get(gatehouse.port, '/v1/messages/?limit=1', cert);
    assert.equal(res.status, 200, res.body);
    const body = JSON.parse(res.body);
    assert.equal(body.items[0].url, `https://127.0.0.1:${gatehouse.port}/v1/messages/${body.items[0].id}`);
    assert.equal(body.next, `https://127.0.0.1:${gatehouse.port}/v1/messages/?limit=1&offset=1`);
  });

  it('routes authenticated requests to the booking services over HTTPS', async () => {
    const res = await get(gatehouse.port, '/v1/hotels/bookings/', cert, { Authorization: ALICE });
    assert.equal(res.status, 200, res.body);
    const items: { url: string }[] = JSON.parse(res.body).items;
    assert.ok(items.length > 0, 'alice has bookings in the demo data');
    for (const booking of items)
      assert.ok(booking.url.startsWith(`https://127.0.0.1:${gatehouse.port}/v1/hotels/bookings/`), booking.url);
  });

  it('is refused by a client that does not trust the certificate', async () => {
    await assert.rejects(get(gatehouse.port, '/v1/messages/', undefined), /self[- ]signed certificate/);
  });
});
