/**
 * @module cli/check-emissary
 * What `gatehouse check` says of the Emissary resources it read: what each
 * became, each field ignored or served otherwise than by Emissary, the
 * records left out for another gateway's `ambassador_id`, and the
 * certificates its Hosts and TLSContexts have in service.
 */
import type { CertificateInService, EmissaryReport, RecordSource } from '../gateway';

function where(source: RecordSource | undefined): string {
  if (!source) return '';
  return `${source.file}: ${source.service ? `service ${source.service}: ` : ''}`;
}

/** The report as text, one resource a line and its notes below it; empty when no Emissary resource was read or skipped. */
export function emissaryReportText(report: EmissaryReport | undefined): string {
  if (!report) return '';
  const lines: string[] = [];
  if (report.records.length > 0) {
    lines.push(`Emissary resources (ambassador_id ${report.ambassadorId}):`);
    for (const r of report.records) {
      const about = [r.apiVersion, r.namespace && `namespace ${r.namespace}`].filter(Boolean).join(', ');
      lines.push(`  ${where(r.source)}${r.kind} ${r.name} (${about}) -> ${r.became}`);
      for (const n of r.notes) lines.push(`    ${n.field ? `${n.field}: ` : ''}${n.note}`);
    }
  }
  if (report.skipped.length > 0) {
    lines.push(`Skipped: records of another ambassador_id than ${report.ambassadorId}:`);
    for (const s of report.skipped)
      lines.push(`  ${where(s.source)}${s.kind} ${s.name} (ambassador_id ${s.ids.join(', ')})`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** The certificates in service, one a line: where each comes from, what it does for whom, what it says of itself; never a key. */
export function certificatesText(certificates: readonly CertificateInService[] | undefined): string {
  if (!certificates?.length) return '';
  const lines = ['Certificates:'];
  for (const c of certificates) {
    lines.push(`  ${c.source} ${c.role} (${c.usedBy.join(', ')}): ${c.subject}`);
    lines.push(`    issuer ${c.issuer}; names ${c.names.join(', ') || 'none'}; valid ${c.validFrom} to ${c.validTo}`);
  }
  return `${lines.join('\n')}\n`;
}
