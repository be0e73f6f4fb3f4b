/**
 * @module tls/pair
 * The TLS material a certificate is served or presented with, checked
 * before anything uses it: a certificate chain and the private key of its
 * first certificate, or a bundle of certificate authorities. A refusal says
 * which part is at fault (the certificate or the key) and what is wrong,
 * so that whoever reports it names the field that holds that part.
 */
import { createSecureContext } from 'node:tls';
import { describeCertificate, isKeyOf, readCertificates, readPrivateKey, type CertificateInfo } from './certificates';

/** A certificate chain and its key, both PEM, that go together. */
export interface CertificatePair {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** The chain, the served certificate first. */
  readonly chain: readonly CertificateInfo[];
}

/** Certificate authorities, PEM, to check a peer's certificate against. */
export interface CertificateBundle {
  readonly ca: Buffer;
  readonly certificates: readonly CertificateInfo[];
}

/** Why material was refused: the part at fault and what is wrong with it (a sentence that follows the part's name). */
export interface MaterialProblem {
  readonly part: 'cert' | 'key' | 'ca';
  readonly message: string;
}

/** The chain and key checked together, or the problem of the part at fault. */
export function checkPair(cert: Buffer, key: Buffer): CertificatePair | MaterialProblem {
  let chain;
  try {
    chain = readCertificates(cert);
  } catch (err) {
    return { part: 'cert', message: (err as Error).message };
  }
  let privateKey;
  try {
    privateKey = readPrivateKey(key);
  } catch (err) {
    return { part: 'key', message: (err as Error).message };
  }
  if (!isKeyOf(chain[0], privateKey)) {
    return { part: 'key', message: `is not the key of the certificate (${describeCertificate(chain[0]).subject})` };
  }
  try {
    // What OpenSSL itself refuses (a key too weak for its security level, a signature it does not take).
    createSecureContext({ cert, key });
  } catch (err) {
    return { part: 'cert', message: `cannot be served with its key: ${(err as Error).message}` };
  }
  return { cert, key, chain: chain.map(describeCertificate) };
}

/** A bundle of certificate authorities checked, or the problem with it. */
export function checkBundle(ca: Buffer): CertificateBundle | MaterialProblem {
  try {
    const certificates = readCertificates(ca).map(describeCertificate);
    createSecureContext({ ca });
    return { ca, certificates };
  } catch (err) {
    return { part: 'ca', message: (err as Error).message };
  }
}

/** Whether a check gave a problem rather than material. */
export function isProblem(value: object): value is MaterialProblem {
  return 'part' in value && 'message' in value;
}
