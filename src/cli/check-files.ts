/**
 * @module cli/check-files
 * What `gatehouse check` says of the config folder's files: each entry and
 * what it was read as (or why it was ignored), and what the folder holds in
 * all, so that a file read as something else than meant shows at once.
 */
import { countsText as holdsText } from '../diag';
import { counted, type FolderCounts, type FolderReport } from '../gatehouse';

/** One line an entry, in columns: the name, what it was read as, what it holds. */
export function filesText(report: FolderReport): string {
  if (report.files.length === 0) return 'Files: none: the folder is empty\n';
  const nameWidth = Math.max(...report.files.map((f) => f.name.length));
  const readWidth = Math.max(...report.files.map((f) => f.readAs.length));
  const lines = report.files.map((f) => `  ${f.name.padEnd(nameWidth)}  ${f.readAs.padEnd(readWidth)}  ${f.detail}`);
  if (report.more) lines.push(`  and ${counted(report.more, 'more entry', 'more entries')}`);
  return `Files:\n${lines.join('\n')}\n`;
}

/** What the folder holds in all, each kind counted, and what it has none of said; as the diag page says it. */
export function countsText(counts: FolderCounts): string {
  return `Loaded: ${holdsText(counts)}\n`;
}
