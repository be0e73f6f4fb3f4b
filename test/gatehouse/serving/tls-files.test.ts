import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import request from 'supertest';
import { listen, readTlsFiles } from '../../../src/gatehouse';
import { watchTlsFiles } from '../../../src/gatehouse/serving/tls-files';
import { DEMO_CONFIG } from '../../support/config-folder';
import { eventually } from '../../support/polling';
import { startGatehouse, type Running } from '../../support/gatehouse';
/** A self-signed certificate for 127.0.0.1 named `cn`, valid for `days` (negative: already expired). */
async function certificate(dir: string, cn: string, days = 1): Promise<{ cert: string; key: string }> {
  const cert = join(dir, `${cn}.crt`);
  const key = join(dir, `${cn}.key`);
  const run = promisify(execFile);
  if (days > 0) {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-days',
      String(days),
      '-keyout',
      key,
      '-out',
      cert,
    ]);
  } else {
    // openssl req takes no days below 1; x509 signs a request for as few as it is told.
    const csr = join(dir, `${cn}.csr`);
    await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${cn}`,
      '-keyout',
      key,
      '-out',
      csr,
    ]);
    await run('openssl', ['x509', '-req', '-in', csr, '-signkey', key, '-days', String(days), '-out', cert]);
  }
  return { cert, key };
}

/** The common name of the certificate a new TLS connection is shown. */
function servedName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject.CN;
      socket.destroy();
      resolve(String(Array.isArray(cn) ? cn[0] : cn));
    });
    socket.on('error', reject);
  });
}

/** Puts `from`'s contents in place of `to` as a Secret update does: written aside, then renamed over it. */
function replace(from: string, to: string): void {
  copyFileSync(from, `${to}.new`);
  renameSync(`${to}.new`, to);
}

describe('gatehouse/serving/tls-files: reading the files', function () {
  let dir: string;
  let good: { cert: string; key: string };
  let other: { cert: string; key: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-files-'));
    [good, other] = await Promise.all([certificate(dir, 'good'), certificate(dir, 'other')]);
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

describe('gatehouse/serving/tls-files: the certificate in service', function () {
  let dir: string;
  let first: { cert: string; key: string };
  let second: { cert: string; key: string };
  let expired: { cert: string; key: string };
  const running: Running[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
    [first, second, expired] = await Promise.all([
      certificate(dir, 'first'),
      certificate(dir, 'second'),
      certificate(dir, 'expired', -1),
    ]);
  });

  after(async () => {
    await Promise.all(running.map((r) => r.stop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Serves the certificate and key copied to `live.crt` and `live.key` of a folder of its own. */
  async function serving(files: { cert: string; key: string }, watch = true) {
    const live = mkdtempSync(join(dir, 'live-'));
    const tlsFiles = { cert: join(live, 'live.crt'), key: join(live, 'live.key') };
    copyFileSync(files.cert, tlsFiles.cert);
    copyFileSync(files.key, tlsFiles.key);
    const r = await startGatehouse({ configDir: DEMO_CONFIG, tls: tlsFiles, watch });
    running.push(r);
    return { ...r, port: Number(new URL(r.url).port), tlsFiles };
  }

  it('warns at start of a certificate that has expired, naming the file and the date', async () => {
    const r = await serving(expired, false);
    const [line] = await r.log.waitForLines(1, (l) => l.level === 40 && /TLS certificate/.test(String(l.msg)));
    assert.equal(line.cert, r.tlsFiles.cert);
    assert.match(String(line.msg), /has expired/);
    assert.ok(!Number.isNaN(Date.parse(String(line.validTo))), String(line.validTo));
    assert.equal(await servedName(r.port), 'expired');
  });

  it('warns of nothing for a certificate in its validity period', async () => {
    const r = await serving(first, false);
    assert.equal(await servedName(r.port), 'first');
    assert.deepEqual(
      r.log.lines.filter((l) => /TLS certificate/.test(String(l.msg)) && l.level === 40),
      [],
    );
  });

  it('serves a renewed certificate to new connections once its files are replaced, without a restart', async () => {
    const r = await serving(first);
    assert.equal(await servedName(r.port), 'first');
    replace(second.key, r.tlsFiles.key);
    replace(second.cert, r.tlsFiles.cert);
    await eventually(
      async () => ((await servedName(r.port)) === 'second' ? true : undefined),
      'the renewed certificate to be served',
    );
    const [line] = await r.log.waitForLines(1, (l) => l.msg === 'TLS certificate reloaded');
    assert.equal(line.cert, r.tlsFiles.cert);
    await request(r.url).get('/v1/messages/1').ca(readFileSync(second.cert)).expect(200);
  });

  it('keeps serving the certificate it has when the new files do not go together, and says why', async () => {
    const r = await serving(first);
    replace(second.cert, r.tlsFiles.cert);
    const [line] = await r.log.waitForLines(
      1,
      (l) => l.msg === 'TLS files refused; the previous certificate keeps serving',
    );
    assert.match(String(line.err), /is not the key of the certificate/);
    assert.equal(await servedName(r.port), 'first');
    // The key that goes with it arrives: both are taken.
    replace(second.key, r.tlsFiles.key);
    await eventually(
      async () => ((await servedName(r.port)) === 'second' ? true : undefined),
      'the completed pair to be served',
    );
  });

  it('keeps serving, and says why, when a renewed certificate is replaced by a FIFO or a file over the size limit', async () => {
    const r = await serving(first);
    const { execFileSync } = await import('node:child_process');
    rmSync(r.tlsFiles.cert);
    execFileSync('mkfifo', [r.tlsFiles.cert]);
    const [line] = await r.log.waitForLines(
      1,
      (l) => l.msg === 'TLS files refused; the previous certificate keeps serving',
    );
    assert.equal(
      line.err,
      `the TLS certificate ${r.tlsFiles.cert} is not a regular file (a FIFO, a device or a socket): refused`,
    );
    assert.equal(await servedName(r.port), 'first');
    assert.throws(
      () => readTlsFiles(first, 64),
      new RegExp(`^Error: the TLS certificate ${first.cert} is larger than the file size limit of 64 bytes`),
    );
  });

  it('goes on looking at the files after a listener that throws, instead of ending the process from its timer', async () => {
    const live = mkdtempSync(join(dir, 'watched-'));
    const files = { cert: join(live, 'a.crt'), key: join(live, 'a.key') };
    copyFileSync(first.cert, files.cert);
    copyFileSync(first.key, files.key);
    let calls = 0;
    let next: (() => void) | undefined;
    const watcher = watchTlsFiles(
      files,
      () => {
        calls++;
        next?.();
        throw new Error('the listener failed');
      },
      20,
    );
    try {
      for (const from of [second, first]) {
        const seen = new Promise<void>((resolve) => (next = resolve));
        replace(from.cert, files.cert);
        await seen;
      }
      assert.ok(calls >= 2);
    } finally {
      watcher.close();
    }
  });

  it('does not look at the files with watch: false', async () => {
    const r = await serving(first, false);
    // The yardstick: one that watches, given the same change at the same moment.
    const watching = await serving(first);
    for (const files of [r.tlsFiles, watching.tlsFiles]) {
      replace(second.key, files.key);
      replace(second.cert, files.cert);
    }
    await eventually(
      async () => ((await servedName(watching.port)) === 'second' ? true : undefined),
      'the watching one to serve the new pair',
    );
    assert.equal(await servedName(r.port), 'first');
  });
});
