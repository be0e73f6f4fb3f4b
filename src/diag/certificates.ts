/**
 * @module diag/certificates
 * The certificates in service, as the diagnostic page shows them: where
 * each comes from, what it does and for whom, its subject, issuer, names
 * and validity, the ones that expire within 14 days marked. Never a key.
 */
import { escapeHtml as escape } from './html';
import type { DiagCertificate } from './types';

/** Days before its end from which a certificate is shown as expiring. */
const EXPIRING_DAYS = 14;

/** The section of the page; empty when no certificate is in service. */
export function certificatesSection(certificates: readonly DiagCertificate[] | undefined, now: Date): string {
  if (certificates === undefined || certificates.length === 0) return '';
  const soon = now.getTime() + EXPIRING_DAYS * 86_400_000;
  const rows = certificates.map((c) => {
    const ends = new Date(c.validTo).getTime();
    const mark = ends <= now.getTime() ? ' class="bad"' : ends <= soon ? ' class="warn"' : '';
    return `<tr><td><code>${escape(c.source)}</code></td><td>${escape(c.role)}</td><td>${escape(c.usedBy.join(', '))}</td><td>${escape(
      c.subject,
    )}</td><td>${escape(c.issuer)}</td><td>${escape(c.names.join(', '))}</td><td${mark}>${escape(c.validTo)}</td></tr>`;
  });
  return `<h2 id="certificates">Certificates</h2><div class="scroll"><table><thead><tr><th>Source</th><th>Role</th><th>Used by</th><th>Subject</th><th>Issuer</th><th>Names</th><th>Valid to</th></tr></thead><tbody>${rows.join(
    '',
  )}</tbody></table></div>`;
}
