/**
 * @module gatehouse/folder/report
 * What a config folder was read as, entry by entry, and what it holds in
 * all: `gatehouse check` prints it and the diag page shows it, so that no
 * file is passed over in silence. The entries come from the reading
 * (./read), what each file holds from the check (./contents).
 */
import { join } from 'node:path';
import type { DiagCounts } from '../../diag';
import type { CheckedFolder } from './check';
import type { ReadAs } from './contents';
import type { EntryKind, FolderEntry } from './read';

/** An entry of the folder: its name in the folder, what it was read as, and what it holds or why it was ignored. */
export interface FolderFile {
  /** Relative to the config folder: `services.yaml`, `ratelimit/a.yaml`. */
  name: string;
  readAs: ReadAs;
  detail: string;
}

/** What the folder holds in all: the counts `gatehouse check` prints and diag shows. */
export type FolderCounts = DiagCounts;

/** The folder's entries (at most {@link MAX_REPORTED_FILES}, `more` the rest), its counts, and what to look at. */
export interface FolderReport {
  files: FolderFile[];
  more?: number;
  counts: FolderCounts;
  /** What a file was read as that its name or content says otherwise, one line each naming the file. */
  warnings: string[];
}

/** Most entries a report lists: a folder of thousands of files would make as long a page. */
export const MAX_REPORTED_FILES = 200;

const READ_AS: Record<Exclude<EntryKind, 'ignored'>, ReadAs> = {
  records: 'records',
  limits: 'limits',
  users: 'users',
  bookings: 'bookings catalogue',
};

function countsOf(entries: readonly FolderEntry[], checked: CheckedFolder): FolderCounts {
  const config = checked.config;
  const counts: FolderCounts = {
    mappings: config?.mappings.length ?? 0,
    authServices: config?.authService ? 1 : 0,
    rateLimitServices: config?.rateLimitService ? 1 : 0,
    modules: config?.module ? 1 : 0,
    emissaryResources: checked.emissary?.records.length ?? 0,
    otherAmbassadorId: checked.emissary?.skipped.length ?? 0,
    ignored: entries.filter((e) => e.kind === 'ignored').length,
  };
  const tls = {
    hosts: config?.hosts?.length ?? 0,
    tlsContexts: config?.tlsContexts?.length ?? 0,
    secrets: config?.secrets?.length ?? 0,
  };
  if (tls.hosts + tls.tlsContexts + tls.secrets > 0) counts.tls = tls;
  if (checked.users) counts.users = checked.users.users.size;
  if (checked.limits) {
    const { table, files } = checked.limits;
    counts.limits = { files: files.length, domains: table.domains.size, rules: table.ruleCount };
  }
  const b = checked.bookings;
  if (b)
    counts.bookings = {
      hotels: b.hotels.length,
      cars: b.cars.length,
      hotelBookings: b.hotel_bookings.length,
      carBookings: b.car_bookings.length,
    };
  return counts;
}

/** The report of the folder `dir`, whose `entries` were read and checked as `checked`. */
export function folderReport(dir: string, entries: readonly FolderEntry[], checked: CheckedFolder): FolderReport {
  const contents = new Map((checked.contents ?? []).map((c) => [c.file, c]));
  const files = entries.slice(0, MAX_REPORTED_FILES).map(({ name, kind, why }): FolderFile => {
    if (kind === 'ignored') return { name, readAs: 'ignored', detail: why ?? 'not read' };
    const found = contents.get(join(dir, name));
    return found
      ? { name, readAs: found.readAs, detail: found.detail }
      : { name, readAs: READ_AS[kind], detail: 'not read: see the problems' };
  });
  const report: FolderReport = { files, counts: countsOf(entries, checked), warnings: checked.folderWarnings ?? [] };
  if (entries.length > files.length) report.more = entries.length - files.length;
  return report;
}
