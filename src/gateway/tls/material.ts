/**
 * @module gateway/tls/material
 * The certificates and keys a configuration names, read and checked once
 * each: a Secret's data (base64) or the files it names, and the files a
 * TLSContext names. Each problem is said at the field that holds the part
 * at fault (`Secret shop-cert: data.tls.key: is not the key of the
 * certificate`), or at the field that names what is missing (`Host shop:
 * tlsSecret.name: names no Secret default/shop-cert`); a certificate in
 * service that has expired is refused at its own field. Nothing read is
 * ever quoted.
 */
import { dirname, resolve } from 'node:path';
import { readBoundedSync } from '../../files';
import { errorText } from '../../files';
import {
  checkBundle,
  checkPair,
  isProblem,
  validityProblem,
  type CertificateBundle,
  type CertificatePair,
} from '../../tls';
import { configProblem, type ConfigProblem } from '../config/problems';
import type { GatewayRecord, RecordSource } from '../config/schema';
import { DEFAULT_NAMESPACE, type SecretRecord } from '../config/tls';
import { CertificateLedger, type CertificateRole } from './ledger';

/** Who uses material, and the fields that name it, for problems. */
export interface Use {
  readonly record: GatewayRecord;
  /** `Host shop`: said where a problem of the material names who needs it. */
  readonly who: string;
  readonly role: CertificateRole;
}

/** A Secret named: its name and namespace, and the field that names it. */
export interface SecretRef {
  readonly name: string;
  readonly namespace: string;
  readonly field: string;
}

/** Reads and checks the material of one configuration, each piece once. */
export class MaterialReader {
  readonly problems: ConfigProblem[] = [];
  /** The files read, to be looked at for a change. */
  readonly files = new Set<string>();
  readonly ledger = new CertificateLedger();
  private readonly secrets = new Map<string, SecretRecord>();
  private readonly pairs = new Map<string, CertificatePair | null>();
  private readonly bundles = new Map<string, { bundle: CertificateBundle; certRequired: boolean } | null>();
  private readonly expired = new Set<string>();

  constructor(
    secrets: readonly SecretRecord[],
    private readonly sourceOf: (record: object) => RecordSource | undefined,
    private readonly fileSizeLimit: number,
    private readonly now: number,
  ) {
    for (const secret of secrets) this.secrets.set(`${secret.namespace ?? DEFAULT_NAMESPACE}/${secret.name}`, secret);
  }

  /** Adds a problem of `record` at `path`. */
  problem(record: GatewayRecord, path: string | undefined, message: string): void {
    this.problems.push(
      configProblem({ source: this.sourceOf(record), kind: record.kind, record: record.name, path }, message),
    );
  }

  /** Every Secret of type kubernetes.io/tls, checked whether or not it is used: it says it holds a pair. */
  checkTlsSecrets(): void {
    for (const [key, secret] of this.secrets) if (secret.type === 'kubernetes.io/tls') this.secretPairOf(key, secret);
  }

  /** The pair of a Secret a record names, or undefined (a problem said). */
  secretPair(ref: SecretRef, use: Use): CertificatePair | undefined {
    const key = `${ref.namespace}/${ref.name}`;
    const secret = this.secrets.get(key);
    if (secret === undefined) {
      this.problem(use.record, ref.field, `names no Secret ${key}${this.nearby(ref)}`);
      return undefined;
    }
    const pair = this.secretPairOf(key, secret);
    if (pair === undefined) return undefined;
    this.inService(pair, secret, this.partField(secret, 'tls.crt'), `Secret ${key}`, use);
    return pair;
  }

  /** The authorities of a Secret a record names (`ca.crt`, else `tls.crt`), or undefined (a problem said). */
  secretBundle(ref: SecretRef, use: Use): { bundle: CertificateBundle; certRequired: boolean } | undefined {
    const key = `${ref.namespace}/${ref.name}`;
    const secret = this.secrets.get(key);
    if (secret === undefined) {
      this.problem(use.record, ref.field, `names no Secret ${key}${this.nearby(ref)}`);
      return undefined;
    }
    const known = this.bundles.get(key);
    if (known !== undefined) return known ?? undefined;
    const part = this.has(secret, 'ca.crt') ? 'ca.crt' : 'tls.crt';
    const bytes = this.value(secret, part);
    let result: { bundle: CertificateBundle; certRequired: boolean } | null = null;
    if (bytes === undefined) {
      if (!this.has(secret, part))
        this.problem(
          secret,
          'data',
          `holds no ca.crt nor tls.crt: the authorities ${use.who} checks client certificates against`,
        );
    } else {
      const bundle = checkBundle(bytes);
      if (isProblem(bundle)) this.problem(secret, this.partField(secret, part), bundle.message);
      else {
        // Emissary reads `cert_required` from the CA's Secret too.
        const required = this.value(secret, 'cert_required')?.toString('utf8').trim().toLowerCase() === 'true';
        result = { bundle, certRequired: required };
        for (const info of bundle.certificates) this.ledger.add(`Secret ${key}`, 'verifies', info, use.who);
      }
    }
    this.bundles.set(key, result);
    return result ?? undefined;
  }

  /** The pair of two files a record names (`cert_chain_file`, `private_key_file`), or undefined (a problem said). */
  filePair(record: GatewayRecord, certFile: string, keyFile: string, use: Use): CertificatePair | undefined {
    const base = this.baseDir(record);
    const cert = this.readFile(record, 'cert_chain_file', resolve(base, certFile));
    const key = this.readFile(record, 'private_key_file', resolve(base, keyFile));
    if (cert === undefined || key === undefined) return undefined;
    const pair = checkPair(cert, key);
    if (isProblem(pair)) {
      this.problem(record, pair.part === 'key' ? 'private_key_file' : 'cert_chain_file', pair.message);
      return undefined;
    }
    this.inService(pair, record, 'cert_chain_file', resolve(base, certFile), use);
    return pair;
  }

  /** The authorities of a file a record names (`cacert_chain_file`), or undefined (a problem said). */
  fileBundle(record: GatewayRecord, file: string, use: Use): CertificateBundle | undefined {
    const path = resolve(this.baseDir(record), file);
    const bytes = this.readFile(record, 'cacert_chain_file', path);
    if (bytes === undefined) return undefined;
    const bundle = checkBundle(bytes);
    if (isProblem(bundle)) {
      this.problem(record, 'cacert_chain_file', bundle.message);
      return undefined;
    }
    for (const info of bundle.certificates) this.ledger.add(path, 'verifies', info, use.who);
    return bundle;
  }

  /** A pair in service: its expiry checked (once per place), its certificates noted. */
  private inService(pair: CertificatePair, holder: GatewayRecord, field: string, source: string, use: Use): void {
    const leaf = pair.chain[0];
    const at = `${source}|${field}`;
    if (validityProblem(leaf, this.now) === 'expired' && !this.expired.has(at)) {
      this.expired.add(at);
      this.problem(
        holder,
        field,
        `the certificate (${leaf.subject}) expired on ${leaf.validTo.toISOString()}: renew it (${use.who} uses it)`,
      );
    }
    this.ledger.add(source, use.role, leaf, use.who);
  }

  /** A Secret's pair, checked once. */
  private secretPairOf(key: string, secret: SecretRecord): CertificatePair | undefined {
    const known = this.pairs.get(key);
    if (known !== undefined) return known ?? undefined;
    let pair: CertificatePair | null = null;
    const missing = ['tls.crt', 'tls.key'].filter((part) => !this.has(secret, part));
    if (missing.length > 0) {
      this.problem(
        secret,
        'data',
        `holds no ${missing.join(' nor ')}: a certificate and its key are tls.crt and tls.key`,
      );
    } else {
      const cert = this.value(secret, 'tls.crt');
      const privateKey = this.value(secret, 'tls.key');
      if (cert !== undefined && privateKey !== undefined) {
        const checked = checkPair(cert, privateKey);
        if (isProblem(checked))
          this.problem(secret, this.partField(secret, checked.part === 'key' ? 'tls.key' : 'tls.crt'), checked.message);
        else pair = checked;
      }
    }
    this.pairs.set(key, pair);
    return pair ?? undefined;
  }

  private has(secret: SecretRecord, part: string): boolean {
    return part in secret.files || part in secret.data;
  }

  /** The field a part of a Secret is given in: `files.tls.crt` or `data.tls.crt`. */
  private partField(secret: SecretRecord, part: string): string {
    return `${part in secret.files ? 'files' : 'data'}.${part}`;
  }

  /** The bytes of a part of a Secret, from its file or its data; undefined (a problem said, for a file) when there are none. */
  private value(secret: SecretRecord, part: string): Buffer | undefined {
    const file = secret.files[part];
    if (file !== undefined) return this.readFile(secret, `files.${part}`, resolve(this.baseDir(secret), file));
    const data = secret.data[part];
    return data === undefined ? undefined : Buffer.from(data, 'base64');
  }

  private readFile(record: GatewayRecord, field: string, path: string): Buffer | undefined {
    this.files.add(path);
    try {
      return readBoundedSync(path, this.fileSizeLimit);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : errorText(err);
      this.problem(record, field, `cannot read ${path}: ${why}`);
      return undefined;
    }
  }

  /** Where a record's relative paths start: the folder of its file, else the working folder. */
  private baseDir(record: GatewayRecord): string {
    const file = this.sourceOf(record)?.file;
    return file === undefined ? process.cwd() : dirname(resolve(file));
  }

  /** `: Secrets of that name: ns/name`, when the name is in another namespace. */
  private nearby(ref: SecretRef): string {
    const others = [...this.secrets.keys()].filter((key) => key.endsWith(`/${ref.name}`));
    return others.length > 0 ? ` (there is ${others.join(', ')}: name its namespace)` : '';
  }
}
