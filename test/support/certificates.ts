/**
 * @module test/support/certificates
 * Real certificates for the tests, made by openssl in a temporary folder:
 * a certificate authority, server certificates it signs for some names
 * (DNS names, IP addresses), client certificates, expired ones, and the
 * Kubernetes Secret that holds a pair, as a test writes it into a config
 * folder.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A certificate and its key: their files, and their PEM text. */
export interface Issued {
  readonly certFile: string;
  readonly keyFile: string;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** What a certificate is made for. */
export interface IssueOptions {
  /** Its common name. */
  readonly cn: string;
  /** DNS names, and IP addresses (`IP:127.0.0.1`), of its subjectAltName; default its common name. */
  readonly names?: readonly string[];
  /** A URI of its subjectAltName (a SPIFFE id). */
  readonly uri?: string;
  /** Days it is valid; negative: it expired that many days ago. Default 2. */
  readonly days?: number;
  /** A client certificate (extendedKeyUsage clientAuth) rather than a server's. */
  readonly client?: boolean;
  /** The file name, without extension; default the common name. */
  readonly file?: string;
}

/** A folder of certificates, removed with `remove()`. */
export class CertificateFolder {
  readonly dir = mkdtempSync(join(tmpdir(), 'gatehouse-certs-'));
  private serial = 1;

  /** A self-signed certificate authority. */
  async authority(cn = 'Test CA'): Promise<Issued> {
    const base = join(this.dir, cn.replace(/\W+/g, '-'));
    // prettier-ignore
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      '-keyout', `${base}.key`, '-out', `${base}.crt`,
    ]);
    return this.read(base);
  }

  /** A certificate `ca` signs. */
  async issue(ca: Issued, options: IssueOptions): Promise<Issued> {
    const base = join(this.dir, (options.file ?? options.cn).replace(/[^\w.-]+/g, '-'));
    // prettier-ignore
    await run('openssl', [
      'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-subj', `/O=Gatehouse Tests/CN=${options.cn}`, '-keyout', `${base}.key`, '-out', `${base}.csr`,
    ]);
    const names = (options.names ?? [options.cn]).map((n) => (n.startsWith('IP:') ? n : `DNS:${n}`));
    if (options.uri !== undefined) names.push(`URI:${options.uri}`);
    const usage = options.client ? 'clientAuth' : 'serverAuth';
    writeFileSync(`${base}.ext`, `subjectAltName=${names.join(',')}\nextendedKeyUsage=${usage}\n`);
    // prettier-ignore
    await run('openssl', [
      'x509', '-req', '-in', `${base}.csr`, '-CA', ca.certFile, '-CAkey', ca.keyFile, '-set_serial', String(this.serial++),
      '-days', String(options.days ?? 2), '-extfile', `${base}.ext`, '-out', `${base}.crt`,
    ]);
    return this.read(base);
  }

  private read(base: string): Issued {
    const certFile = `${base}.crt`;
    const keyFile = `${base}.key`;
    return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A Kubernetes Secret of type kubernetes.io/tls holding `pair`, as YAML. */
export function tlsSecret(name: string, pair: { cert: Buffer; key: Buffer }, namespace?: string): string {
  return [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    `  name: ${name}`,
    ...(namespace !== undefined ? [`  namespace: ${namespace}`] : []),
    'type: kubernetes.io/tls',
    'data:',
    `  tls.crt: ${pair.cert.toString('base64')}`,
    `  tls.key: ${pair.key.toString('base64')}`,
    '',
  ].join('\n');
}

/** An Opaque Secret holding the certificate authority `ca` in `ca.crt`, as YAML. */
export function caSecret(name: string, ca: { cert: Buffer }, namespace?: string): string {
  return [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    `  name: ${name}`,
    ...(namespace !== undefined ? [`  namespace: ${namespace}`] : []),
    'type: Opaque',
    'data:',
    `  ca.crt: ${ca.cert.toString('base64')}`,
    '',
  ].join('\n');
}
