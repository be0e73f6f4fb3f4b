/**
 * @module gatehouse/serving/tls-files
 * The certificate in service: its files read and checked, naming the file
 * at fault and what is wrong with it; its validity period, told when it is
 * loaded; and its files looked at, so that a renewed certificate
 * (cert-manager or a Secret update, certbot, a copy by hand) is served
 * without a restart, as Envoy serves one from its SDS files.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { statSync, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { DEFAULT_FILE_SIZE_LIMIT, errorText, FileTooLargeError, NotAFileError, readBoundedSync } from '../../files';
import type { Logger } from '../../telemetry';
import type { FolderWatcher } from '../folder/watch';

/** The certificate and key an HTTPS server is given, by path. */
export interface TlsFiles {
  /** Path of the PEM certificate (chain). */
  cert: string;
  /** Path of the PEM private key. */
  key: string;
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

/** How often the TLS files are looked at for a change. */
export const TLS_POLL_MS = 1000;

/** The period a certificate (the first of a chain) is valid in. */
export interface CertificateValidity {
  subject: string;
  validFrom: Date;
  validTo: Date;
}

/** The validity of the first certificate of `pem`, which readTlsFiles has checked is one. */
export function certificateValidity(pem: Buffer): CertificateValidity {
  const x509 = new X509Certificate(pem);
  return { subject: x509.subject, validFrom: new Date(x509.validFrom), validTo: new Date(x509.validTo) };
}

/**
 * What is wrong with a certificate's validity at `now`, in words for a log
 * line that begins "the TLS certificate", or undefined. Such a certificate
 * is served all the same, as Envoy and nginx serve it: clients that do not
 * check it, or a renewal on its way, are better served than refused.
 */
export function validityProblem(validity: CertificateValidity, now: number = Date.now()): string | undefined {
  if (validity.validTo.getTime() <= now) return 'has expired: every client that checks it refuses the connection';
  if (validity.validFrom.getTime() > now) return 'is not valid yet: every client that checks it refuses the connection';
  return undefined;
}

/** What a file's contents are known by: the file a path names (through links), its size and times. */
function signatureOf(s: Stats): string {
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
}

function signatureSync(path: string): string {
  try {
    return signatureOf(statSync(path));
  } catch {
    return 'none';
  }
}

/**
 * Calls `onChange` after a look at the files finds that either path now
 * names other contents than at the look before: a file written in place, a
 * file renamed over it, a link pointed elsewhere (a Secret's `..data`).
 * Polled rather than watched: a link swapped in another folder is seen as
 * surely, and two stats a second cost nothing. A look that finds a half
 * written pair is followed by another once the writing is done.
 */
export function watchTlsFiles(files: TlsFiles, onChange: () => void, pollMs: number = TLS_POLL_MS): FolderWatcher {
  let last = `${signatureSync(files.cert)}|${signatureSync(files.key)}`;
  let closed = false;
  let looking = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      const [cert, key] = await Promise.all(
        [files.cert, files.key].map((p) => stat(p).then(signatureOf, () => 'none')),
      );
      const now = `${cert}|${key}`;
      if (closed || now === last) return;
      last = now;
      onChange();
    } catch {
      // A look runs in a timer: a listener that throws must not end the process (followTlsFiles logs its own failures).
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(() => void look(), pollMs);
  timer.unref();
  return {
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}

/** Warns, naming the file, of a certificate in service outside its validity period. */
export function warnOfValidity(logger: Logger, certFile: string, validity: CertificateValidity): void {
  const problem = validityProblem(validity);
  if (problem)
    logger.warn(
      { cert: certFile, validFrom: validity.validFrom, validTo: validity.validTo },
      `the TLS certificate ${problem}`,
    );
}

/**
 * Serves the TLS files anew with `reload` whenever they change, and logs
 * what came of it: the certificate now served, or why the files were refused
 * and the certificate in service kept. `reload` returns nothing while there
 * is no server yet.
 */
export function followTlsFiles(
  files: TlsFiles,
  reload: () => CertificateValidity | undefined,
  logger: Logger,
  pollMs: number = TLS_POLL_MS,
): FolderWatcher {
  return watchTlsFiles(
    files,
    () => {
      try {
        const validity = reload();
        if (!validity) return;
        logger.info(
          { cert: files.cert, subject: validity.subject, validTo: validity.validTo },
          'TLS certificate reloaded',
        );
        warnOfValidity(logger, files.cert, validity);
      } catch (err) {
        logger.error({ err: errorText(err) }, 'TLS files refused; the previous certificate keeps serving');
      }
    },
    pollMs,
  );
}
