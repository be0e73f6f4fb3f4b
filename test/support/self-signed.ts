/**
 * @module test/support/self-signed
 * A self-signed certificate for `localhost`, made with openssl in a
 * temporary folder, for the tests of a TLS connection to a service.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A key and the certificate that names `localhost` with it. */
export interface SelfSigned {
  readonly key: Buffer;
  readonly cert: Buffer;
}

/** Makes a P-256 key and a certificate for localhost, valid one day. */
export function selfSignedLocalhost(): SelfSigned {
  const dir = mkdtempSync(join(tmpdir(), 'self-signed-'));
  try {
    // prettier-ignore
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
