/**
 * @module cli/check-files
 * What `gatehouse check` says of the config folder's files: each entry and
 * what it was read as (or why it was ignored), and what the folder holds in
 * all, so that a file read as something else than meant shows at once.
 */
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

/** What the folder holds in all, each kind counted, and what it has none of said. */
export function countsText(counts: FolderCounts): string {
  const parts = [
    counted(counts.mappings, 'Mapping'),
    counted(counts.authServices, 'AuthService'),
    counted(counts.rateLimitServices, 'RateLimitService'),
  ];
  if (counts.modules > 0) parts.push(counted(counts.modules, 'Module'));
  if (counts.emissaryResources > 0) parts.push(`from ${counted(counts.emissaryResources, 'Emissary resource')}`);
  if (counts.otherAmbassadorId > 0)
    parts.push(`${counted(counts.otherAmbassadorId, 'record')} left to another ambassador_id`);
  parts.push(counts.users === undefined ? 'no users file' : counted(counts.users, 'user'));
  const limits = counts.limits;
  if (limits !== undefined)
    parts.push(
      limits.files === 0
        ? 'no limits (no ratelimit.yaml, no ratelimit/)'
        : `${counted(limits.rules, 'limit')} in ${counted(limits.domains, 'domain')}`,
    );
  const b = counts.bookings;
  parts.push(
    b === undefined
      ? 'no bookings catalogue'
      : `${counted(b.hotels, 'hotel')}, ${counted(b.cars, 'car')}, ${counted(b.hotelBookings + b.carBookings, 'booking')}`,
  );
  if (counts.ignored > 0) parts.push(`${counted(counts.ignored, 'entry', 'entries')} ignored`);
  return `Loaded: ${parts.join(', ')}\n`;
}
