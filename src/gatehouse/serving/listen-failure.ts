/**
 * @module gatehouse/serving/listen-failure
 * Why a server could not start, in words an operator acts on: which address
 * or which TLS file, and what is wrong with it, rather than a system call's
 * error code or an OpenSSL routine's name.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { DEFAULT_FILE_SIZE_LIMIT, errorText, FileTooLargeError, NotAFileError, readBoundedSync } from '../../files';
import { createSecureContext } from 'node:tls';
import { hostPort } from '../../http';
import type { TlsFiles } from './http-server';

/** What the system's error codes mean for an address to listen on. */
const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use (another process listens on that port)',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EPERM: 'permission denied',
  EADDRNOTAVAIL: 'no network interface of this machine has that address',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve (the resolver did not answer)',
  EAFNOSUPPORT: 'this machine does not support that address family',
};

/**
 * The error to report for a server that could not listen on `host:port`.
 * `what` names the server (`HTTP`, `gRPC`). grpc-js reports a bind failure
 * with the system's message inside its own; the code is read from either.
 */
export function listenFailure(err: unknown, what: string, host: string, port: number): Error {
  const e = err as NodeJS.ErrnoException | undefined;
  const message = e?.message ?? String(err);
  const code = typeof e?.code === 'string' ? e.code : /\b(E[A-Z_]{3,})\b/.exec(message)?.[1];
  const reason = (code && LISTEN_REASONS[code]) ?? message;
  return new Error(`cannot listen for ${what} on ${hostPort(host, port)}: ${reason}`);
}

/** Why a file could not be read, without the system call's wording. */
function unreadable(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return errorText(err);
}

/**
 * The certificate and key, read (each at most `fileSizeLimit` bytes, and only
 * a regular file) and checked; throws naming the file at fault and what is
 * wrong with it.
 */
export function readTlsFiles(
  files: TlsFiles,
  fileSizeLimit: number = DEFAULT_FILE_SIZE_LIMIT,
): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string): Buffer => {
    try {
      return readBoundedSync(file, fileSizeLimit);
    } catch (err) {
      if (err instanceof FileTooLargeError || err instanceof NotAFileError)
        throw new Error(`the TLS ${what} ${file} ${err.message}`);
      throw new Error(`cannot read the TLS ${what} ${file}: ${unreadable(err)}`);
    }
  };
  const cert = read(files.cert, 'certificate');
  const key = read(files.key, 'key');
  try {
    new X509Certificate(cert);
  } catch {
    throw new Error(`the TLS certificate ${files.cert} holds no certificate in PEM form (-----BEGIN CERTIFICATE-----)`);
  }
  try {
    createPrivateKey(key);
  } catch (err) {
    // `BEGIN ENCRYPTED PRIVATE KEY`, or the `Proc-Type: 4,ENCRYPTED` of an older PEM key.
    if ((err as NodeJS.ErrnoException).code === 'ERR_MISSING_PASSPHRASE' || /ENCRYPTED/.test(key.toString('latin1'))) {
      throw new Error(
        `the TLS key ${files.key} is encrypted: give the key without its passphrase (openssl pkey -in key.pem -out plain.pem)`,
      );
    }
    throw new Error(`the TLS key ${files.key} holds no private key in PEM form (-----BEGIN PRIVATE KEY-----)`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    if (/key values mismatch/i.test((err as Error).message)) {
      throw new Error(`the TLS key ${files.key} is not the key of the certificate ${files.cert}`);
    }
    throw new Error(`the TLS certificate ${files.cert} and key ${files.key} cannot be used: ${(err as Error).message}`);
  }
  return { cert, key };
}
