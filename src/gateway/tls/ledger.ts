/**
 * @module gateway/tls/ledger
 * Every certificate a configuration has in service, described as an
 * operator is shown it (diag, `gatehouse check`, the expiry metric): where
 * it comes from (a Secret or a file), what it does (serves a host,
 * presents the gateway to an upstream, verifies a peer), who uses it, and
 * its subject, issuer, names and validity. Never a key.
 */
import type { CertificateInfo } from '../../tls';

/** What a certificate does: serves client connections, presents the gateway to an upstream, or verifies a peer's. */
export type CertificateRole = 'serves' | 'presents' | 'verifies';

/** A certificate in service. */
export interface CertificateInService {
  /** `Secret default/shop-cert`, or the path of its file. */
  readonly source: string;
  readonly role: CertificateRole;
  /** `Host shop`, `TLSContext upstream`... */
  readonly usedBy: readonly string[];
  readonly subject: string;
  readonly issuer: string;
  readonly names: readonly string[];
  /** ISO 8601. */
  readonly validFrom: string;
  readonly validTo: string;
}

/** Collects the certificates of one configuration, each once per source, role and certificate. */
export class CertificateLedger {
  private readonly entries = new Map<
    string,
    { info: CertificateInfo; source: string; role: CertificateRole; usedBy: Set<string> }
  >();

  add(source: string, role: CertificateRole, info: CertificateInfo, usedBy: string): void {
    const key = `${source}|${role}|${info.sha256}`;
    const known = this.entries.get(key);
    if (known !== undefined) known.usedBy.add(usedBy);
    else this.entries.set(key, { info, source, role, usedBy: new Set([usedBy]) });
  }

  /** The certificates, in the order met. */
  list(): CertificateInService[] {
    return [...this.entries.values()].map(({ info, source, role, usedBy }) => ({
      source,
      role,
      usedBy: [...usedBy],
      subject: info.subject,
      issuer: info.issuer,
      names: info.names,
      validFrom: info.validFrom.toISOString(),
      validTo: info.validTo.toISOString(),
    }));
  }
}
