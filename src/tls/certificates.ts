/**
 * @module tls/certificates
 * PEM certificates and keys as an operator is shown them: a chain or a CA
 * bundle split into its certificates, each described by subject, issuer,
 * names and validity (never by its key), and a key checked against its
 * certificate, every refusal in words that name what is wrong and never
 * quote the key.
 */
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

/** What is shown of a certificate: never its key. */
export interface CertificateInfo {
  /** The subject, as `CN=example.com, O=Example`. */
  readonly subject: string;
  readonly issuer: string;
  /** The DNS names and IP addresses it is valid for (its subjectAltName), else its common name. */
  readonly names: readonly string[];
  readonly validFrom: Date;
  readonly validTo: Date;
  /** SHA-256 of its DER form, in hex: the `Hash` of Envoy's X-Forwarded-Client-Cert. */
  readonly sha256: string;
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g;

/** `CN=a\nO=b` (Node's form, one attribute a line) as `CN=a, O=b`. */
function oneLine(name: string): string {
  return name.split('\n').filter(Boolean).join(', ');
}

/** The DNS names and IP addresses of a subjectAltName, in the order written. */
export function altNames(x509: X509Certificate): string[] {
  const names: string[] = [];
  for (const entry of (x509.subjectAltName ?? '').split(', ')) {
    if (entry.startsWith('DNS:')) names.push(entry.slice(4));
    else if (entry.startsWith('IP Address:')) names.push(entry.slice(11));
  }
  return names;
}

/** The URIs of a subjectAltName (a SPIFFE id, as a service mesh writes one). */
export function altUris(x509: X509Certificate): string[] {
  const uris: string[] = [];
  for (const entry of (x509.subjectAltName ?? '').split(', ')) if (entry.startsWith('URI:')) uris.push(entry.slice(4));
  return uris;
}

/** The common name of a subject (`CN=...`), if it has one. */
function commonName(subject: string): string | undefined {
  for (const line of subject.split('\n')) if (line.startsWith('CN=')) return line.slice(3);
  return undefined;
}

/** A certificate described for logs, diag, metrics and `gatehouse check`. */
export function describeCertificate(x509: X509Certificate): CertificateInfo {
  const names = altNames(x509);
  const cn = commonName(x509.subject);
  return {
    subject: oneLine(x509.subject),
    issuer: oneLine(x509.issuer),
    names: names.length > 0 || cn === undefined ? names : [cn],
    validFrom: new Date(x509.validFrom),
    validTo: new Date(x509.validTo),
    sha256: createHash('sha256').update(x509.raw).digest('hex'),
  };
}

/**
 * The certificates of a PEM text (a chain, a CA bundle), in order. Throws,
 * saying what is wrong, when it holds none or one that cannot be read.
 */
export function readCertificates(pem: Buffer | string): X509Certificate[] {
  const text = typeof pem === 'string' ? pem : pem.toString('latin1');
  const blocks = text.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error('holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new Error(`holds a certificate that cannot be read (the ${ordinal(i + 1)} of the file)`);
    }
  });
}

function ordinal(n: number): string {
  const suffix =
    n % 10 === 1 && n % 100 !== 11
      ? 'st'
      : n % 10 === 2 && n % 100 !== 12
        ? 'nd'
        : n % 10 === 3 && n % 100 !== 13
          ? 'rd'
          : 'th';
  return `${n}${suffix}`;
}

/**
 * The private key of a PEM text. Throws, saying what is wrong and never
 * quoting it, when it holds none, or one that is encrypted.
 */
export function readPrivateKey(pem: Buffer | string): KeyObject {
  const text = typeof pem === 'string' ? pem : pem.toString('latin1');
  try {
    return createPrivateKey(text);
  } catch (err) {
    // `BEGIN ENCRYPTED PRIVATE KEY`, or the `Proc-Type: 4,ENCRYPTED` of an older PEM key.
    if ((err as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE' || /ENCRYPTED/.test(text)) {
      throw new Error('is an encrypted key: give it without its passphrase (openssl pkey -in key.pem -out plain.pem)');
    }
    throw new Error('holds no private key in PEM form (-----BEGIN PRIVATE KEY-----)');
  }
}

/** Whether `key` is the private key of `certificate`. */
export function isKeyOf(certificate: X509Certificate, key: KeyObject): boolean {
  try {
    return certificate.checkPrivateKey(key);
  } catch {
    return false;
  }
}

/** What is wrong with a certificate's validity at `now`, in words that follow "the certificate", or undefined. */
export function validityProblem(info: CertificateInfo, now: number): 'expired' | 'not yet valid' | undefined {
  if (info.validTo.getTime() <= now) return 'expired';
  if (info.validFrom.getTime() > now) return 'not yet valid';
  return undefined;
}

/** `CN=example.com (example.com, www.example.com), valid to 2026-01-01T00:00:00.000Z`: one certificate in a line. */
export function certificateLine(info: CertificateInfo): string {
  return `${info.subject} (${info.names.join(', ') || 'no names'}), issued by ${info.issuer}, valid to ${info.validTo.toISOString()}`;
}
