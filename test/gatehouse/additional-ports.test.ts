/**
 * @module test/gatehouse/additional-ports
 * A Host's `requestPolicy.insecure.additionalPort` as clients meet it over
 * real sockets: the port opened beside PORT answers each Host's insecure
 * action (Redirect, Route, Reject), over HTTP/1.1 and h2c, with the
 * cleartext port's refusals; one equal to PORT is that listener; -1 and no
 * value open nothing; a reload moves, opens and closes it, keeping the last
 * good one when a port cannot be had; a stop closes it.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import { once } from 'node:events';
import { CertificateFolder, tlsSecret, type Issued } from '../support/certificates';
import { freePort } from '../support/ports';
import { documents, resource } from '../support/tls-config';
import { recordingUpstream, startTlsRig, type RecordingUpstream, type TlsRig } from '../support/tls-rig';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** GET `path` on 127.0.0.1:`port` with Host `host`, over a connection of its own. */
function get(port: number, host: string, path = '/basket?x=1'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Whether anything accepts a connection on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** A Host served with the test certificate, its insecure action and additionalPort as given. */
function host(name: string, action: string, additionalPort?: number): string {
  const insecure = additionalPort === undefined ? { action } : { action, additionalPort };
  return resource('Host', name, {
    hostname: `${name}.test`,
    tlsSecret: { name: 'shop-cert' },
    requestPolicy: { insecure },
  });
}

describe("a Host's additional cleartext port", function () {
  const certs = new CertificateFolder();
  let pair: Issued;
  let upstream: RecordingUpstream;

  before(async () => {
    const ca = await certs.authority('Additional Port CA');
    pair = await certs.issue(ca, { cn: 'shop', names: ['redirect.test', 'route.test', 'reject.test'] });
    upstream = await recordingUpstream();
  });
  after(async () => {
    await upstream?.close();
    certs.remove();
  });

  /** The folder's files: the Secret, a Mapping for everything, and `hosts`. */
  const files = (...hosts: string[]) => ({
    'secrets.yaml': tlsSecret('shop-cert', pair),
    'hosts.yaml': documents(
      ...hosts,
      resource('Mapping', 'all', { prefix: '/', service: upstream.address, hostname: '*', rewrite: '' }),
    ),
  });

  describe('opened beside PORT', () => {
    let rig: TlsRig;
    let extra: number;

    before(async () => {
      extra = await freePort();
      rig = await startTlsRig(
        files(host('redirect', 'Redirect', extra), host('route', 'Route', extra), host('reject', 'Reject', extra)),
      );
    });
    after(async () => rig?.stop());

    it('listens on the port the Hosts name, beside PORT, and says so', () => {
      assert.notEqual(rig.port, extra);
      assert.deepEqual(rig.gatehouse.additionalPorts(), [extra]);
      const line = rig.log.lines.find((l) => l.msg === 'additional cleartext port open');
      assert.deepEqual(line?.hosts, ['redirect', 'route', 'reject']);
      assert.equal(line?.url, `http://127.0.0.1:${extra}`);
    });

    it('redirects a Redirect Host to https on the same host, path and query', async () => {
      const plain = await get(extra, 'redirect.test');
      assert.equal(plain.status, 301);
      assert.equal(plain.headers.location, 'https://redirect.test/basket?x=1');
      const named = await get(extra, `redirect.test:${extra}`);
      assert.equal(named.status, 301);
      assert.equal(named.headers.location, `https://redirect.test:${rig.httpsPort()}/basket?x=1`);
    });

    it('routes a Route Host as usual, the upstream told it came over http', async () => {
      const res = await get(extra, 'route.test');
      assert.equal(res.status, 200, res.body);
      assert.equal(JSON.parse(res.body).path, '/basket?x=1');
      assert.equal(upstream.last()?.['x-forwarded-proto'], 'http');
      assert.equal(upstream.last()?.['x-forwarded-host'], 'route.test');
    });

    it('refuses a Reject Host with 403 and the error body, as PORT does', async () => {
      const res = await get(extra, 'reject.test');
      assert.equal(res.status, 403);
      const body = JSON.parse(res.body) as { code: number; message: string };
      assert.equal(body.code, 403);
      assert.match(body.message, /^403: /);
      assert.match(res.body, /reject\.test is served over HTTPS only/);
      const onPort = await get(rig.port, 'reject.test');
      assert.equal(onPort.status, 403);
      assert.equal(onPort.body, res.body);
    });

    it('serves HTTP/2 with prior knowledge there, as on PORT', async () => {
      const session = http2.connect(`http://127.0.0.1:${extra}`);
      try {
        const stream = session.request({ ':path': '/basket?x=1', ':authority': 'redirect.test' });
        const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
        stream.resume();
        await once(stream, 'end');
        assert.equal(headers[':status'], 301);
        assert.equal(headers.location, 'https://redirect.test/basket?x=1');
      } finally {
        session.close();
      }
    });

    it('refuses there what PORT refuses: a path that escapes the root is a 400 that reaches no upstream', async () => {
      const before = upstream.last();
      const res = await get(extra, 'route.test', '/a/../../etc/passwd');
      assert.equal(res.status, 400, res.body);
      assert.equal(JSON.parse(res.body).code, 400);
      assert.equal(upstream.last(), before);
    });
  });

  describe('across reloads', () => {
    let rig: TlsRig;
    let first: number;

    before(async () => {
      first = await freePort();
      rig = await startTlsRig(files(host('route', 'Route', first)));
    });
    after(async () => rig?.stop());

    it('moves to the port a reload names: the new one opens, the old one closes', async () => {
      const second = await freePort();
      rig.write('hosts.yaml', files(host('route', 'Route', second))['hosts.yaml']);
      assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
      assert.deepEqual(rig.gatehouse.additionalPorts(), [second]);
      assert.equal((await get(second, 'route.test')).status, 200);
      assert.equal(await accepts(first), false, 'the old port is closed');
      first = second;
    });

    it('keeps the last good port serving when the port a reload names is taken, and says so', async () => {
      const taken = net.createServer();
      taken.listen(0, '127.0.0.1');
      await once(taken, 'listening');
      const busy = (taken.address() as net.AddressInfo).port;
      try {
        rig.write('hosts.yaml', files(host('route', 'Route', busy))['hosts.yaml']);
        assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
        assert.deepEqual(rig.gatehouse.additionalPorts(), [first], 'the last good port stays open');
        assert.equal((await get(first, 'route.test')).status, 200);
        const line = rig.log.lines.find((l) => l.msg?.toString().startsWith('an additional cleartext port cannot'));
        assert.equal(line?.port, busy);
        assert.deepEqual(line?.hosts, ['route']);
        assert.match(String(line?.err), /already in use/);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
      // The next reload tries again, and the port, now free, opens.
      assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
      assert.deepEqual(rig.gatehouse.additionalPorts(), [busy]);
      assert.equal((await get(busy, 'route.test')).status, 200);
      assert.equal(await accepts(first), false);
      first = busy;
    });

    it('closes it when a reload says -1, which also refuses the Host cleartext on PORT', async () => {
      rig.write('hosts.yaml', files(host('route', 'Route', -1))['hosts.yaml']);
      assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
      assert.deepEqual(rig.gatehouse.additionalPorts(), []);
      assert.equal(await accepts(first), false);
      assert.equal((await get(rig.port, 'route.test')).status, 403);
    });

    it('opens none for a Host without additionalPort: its cleartext is served on PORT alone', async () => {
      rig.write('hosts.yaml', files(host('route', 'Route'))['hosts.yaml']);
      assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
      assert.deepEqual(rig.gatehouse.additionalPorts(), []);
      assert.equal((await get(rig.port, 'route.test')).status, 200);
    });

    it('refuses a reload whose additionalPort is no port, naming the Host, and keeps what serves', async () => {
      const kept = await freePort();
      rig.write('hosts.yaml', files(host('route', 'Route', kept))['hosts.yaml']);
      assert.deepEqual(await rig.gatehouse.reload(), { ok: true });
      rig.write('hosts.yaml', files(host('route', 'Route', 0))['hosts.yaml']);
      const outcome = await rig.gatehouse.reload();
      assert.equal(outcome.ok, false);
      assert.match(
        outcome.ok ? '' : outcome.problems.join('\n'),
        /hosts\.yaml: Host route: spec\.requestPolicy\.insecure\.additionalPort: must be a port from 1 to 65535, or -1 for none/,
      );
      assert.deepEqual(rig.gatehouse.additionalPorts(), [kept]);
      assert.equal((await get(kept, 'route.test')).status, 200);
      first = kept;
    });

    it('closes it on stop: nothing listens there afterwards', async () => {
      assert.equal(await accepts(first), true);
      await rig.stop();
      assert.equal(await accepts(first), false);
      assert.equal(await accepts(rig.port), false);
    });
  });

  describe('equal to PORT', () => {
    it('is the cleartext listener itself: no second bind, the Host served there as its action says', async () => {
      const port = await freePort();
      const rig = await startTlsRig(files(host('redirect', 'Redirect', port), host('route', 'Route', port)), {
        port,
      });
      try {
        assert.equal(rig.port, port);
        assert.deepEqual(rig.gatehouse.additionalPorts(), []);
        assert.equal((await get(port, 'redirect.test')).status, 301);
        assert.equal((await get(port, 'route.test')).status, 200);
      } finally {
        await rig.stop();
      }
    });
  });

  describe('at start', () => {
    it('fails the start, naming the Host and the port, when the port is taken, and leaves nothing listening', async () => {
      const taken = net.createServer();
      taken.listen(0, '127.0.0.1');
      await once(taken, 'listening');
      const busy = (taken.address() as net.AddressInfo).port;
      const main = await freePort();
      try {
        await assert.rejects(
          startTlsRig(files(host('route', 'Route', busy)), { port: main }),
          new RegExp(
            `^Error: Host route: requestPolicy\\.insecure\\.additionalPort: cannot listen for HTTP on 127\\.0\\.0\\.1:${busy}: the address is already in use`,
          ),
        );
        assert.equal(await accepts(main), false, 'PORT is closed again');
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });
  });
});
