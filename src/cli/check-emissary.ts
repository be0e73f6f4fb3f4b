/**
 * @module cli/check-emissary
 * What `gatehouse check` says of the Emissary resources it read: what each
 * became, each field ignored or served otherwise than by Emissary, and the
 * records left out for another gateway's `ambassador_id`.
 */
import type { EmissaryReport, RecordSource } from '../gateway';

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
