/**
 * @module gatehouse/folder/contents
 * What each file of a config folder was read as and what it holds, said by
 * the check that parsed it (./check), and the warnings for documents written
 * for a file of another kind: rate limits or booking data in a records file,
 * records in a limits or booking data file. Pure, like the check.
 */
import { basename } from 'node:path';
import { parseYamlStream } from '../../files';
import {
  configProblem,
  documentShape,
  documentWhat,
  shapeText,
  type ConfigProblem,
  type EmissaryReport,
  type GatewayConfig,
  type IgnoredDocument,
} from '../../gateway';
import { displayPath, type LimitsFile, type LoadedLimits } from '../../ratelimit';
import type { ParsedUsers } from '../../auth';
import type { BookingData } from '../../bookings';
import type { FolderTexts } from './read';

/** What a check found that says what each file holds (./check's CheckedFolder has it all). */
export interface CheckedContents {
  config?: GatewayConfig;
  limits?: LoadedLimits;
  users?: ParsedUsers;
  bookings?: BookingData;
  emissary?: EmissaryReport;
}

/** What a file was read as. */
export type ReadAs = 'records' | 'Emissary resources' | 'limits' | 'users' | 'bookings catalogue' | 'ignored';

/** A file as the check read it: its path as read, what it was read as, and what it holds. */
export interface FileContents {
  file: string;
  readAs: ReadAs;
  /** `4 Mappings, 1 AuthService`, `domain gateway: 2 rules`, `2 users`. */
  detail: string;
}

/** `1 Mapping`, `2 Mappings`; `plural` when adding an s will not do. */
export function counted(n: number, one: string, plural = `${one}s`): string {
  return `${n} ${n === 1 ? one : plural}`;
}

const NOT_LOADED = 'not loaded: see the problems';
/** The order in which a file's records are counted: the routes first. */
const KIND_ORDER = ['Mapping', 'AuthService', 'RateLimitService', 'Module'];

/** The records of each file, by kind, and the Services whose annotations held them. */
function recordsByFile(config: GatewayConfig): Map<string, { kinds: Map<string, number>; services: Set<string> }> {
  const byFile = new Map<string, { kinds: Map<string, number>; services: Set<string> }>();
  for (const [record, source] of config.recordSources ?? []) {
    let entry = byFile.get(source.file);
    if (entry === undefined) byFile.set(source.file, (entry = { kinds: new Map(), services: new Set() }));
    entry.kinds.set(record.kind, (entry.kinds.get(record.kind) ?? 0) + 1);
    if (source.service !== undefined) entry.services.add(source.service);
  }
  return byFile;
}

/** The documents of a file that hold no record, in a few words: `ignored: document 2 (domain gateway)`. */
function ignoredText(ignored: readonly IgnoredDocument[]): string {
  if (ignored.length === 0) return '';
  const shown = ignored.slice(0, 3).map((d) => `document ${d.index} (${d.what})`);
  const more = ignored.length > shown.length ? ` and ${ignored.length - shown.length} more` : '';
  return `ignored: ${shown.join(', ')}${more}`;
}

function recordsContents(
  texts: FolderTexts,
  checked: CheckedContents,
  ignored: readonly IgnoredDocument[],
): FileContents[] {
  const byFile = checked.config ? recordsByFile(checked.config) : undefined;
  const emissary = new Map<string, number>();
  for (const r of checked.emissary?.records ?? [])
    if (r.source) emissary.set(r.source.file, (emissary.get(r.source.file) ?? 0) + 1);
  const skipped = new Map<string, number>();
  for (const s of checked.emissary?.skipped ?? [])
    if (s.source) skipped.set(s.source.file, (skipped.get(s.source.file) ?? 0) + 1);
  return (texts.records ?? []).map(({ file }) => {
    const resources = emissary.get(file) ?? 0;
    const readAs: ReadAs = resources > 0 ? 'Emissary resources' : 'records';
    if (byFile === undefined) return { file, readAs, detail: NOT_LOADED };
    const own = byFile.get(file);
    const parts: string[] = [];
    if (own === undefined) parts.push('no record');
    else {
      const kinds = [...own.kinds]
        .sort(([a], [b]) => KIND_ORDER.indexOf(a) - KIND_ORDER.indexOf(b))
        .map(([kind, n]) => counted(n, kind));
      const annotations = own.services.size > 0 ? ` (annotations of ${counted(own.services.size, 'Service')})` : '';
      parts.push(`${kinds.join(', ')}${annotations}`);
    }
    if (resources > 0) parts.push(`from ${counted(resources, 'Emissary resource')}`);
    const others = skipped.get(file) ?? 0;
    if (others > 0) parts.push(`${counted(others, 'record')} of another ambassador_id`);
    const text = ignoredText(ignored.filter((d) => d.file === file));
    if (text) parts.push(text);
    return { file, readAs, detail: parts.join('; ') };
  });
}

/** What each file of `texts` holds, as `checked` found it. */
export function describeContents(
  texts: FolderTexts,
  checked: CheckedContents,
  ignored: readonly IgnoredDocument[] = [],
): FileContents[] {
  const contents = recordsContents(texts, checked, ignored);
  const byFile = new Map((checked.limits?.byFile ?? []).map((f) => [f.file, f]));
  for (const { file } of texts.limits ?? []) {
    const own = byFile.get(file);
    const domains = own && `domain${own.domains.length === 1 ? '' : 's'} ${own.domains.join(', ')}`;
    contents.push({ file, readAs: 'limits', detail: own ? `${domains}: ${counted(own.rules, 'rule')}` : NOT_LOADED });
  }
  if (texts.users) {
    const users = checked.users;
    contents.push({
      file: texts.users.file,
      readAs: 'users',
      detail: users ? counted(users.users.size, 'user') : NOT_LOADED,
    });
  }
  if (texts.bookings) {
    const b = checked.bookings;
    const detail = b
      ? [
          counted(b.hotels.length, 'hotel'),
          counted(b.cars.length, 'car'),
          counted(b.hotel_bookings.length, 'hotel booking'),
          counted(b.car_bookings.length, 'car booking'),
        ].join(', ')
      : NOT_LOADED;
    contents.push({ file: texts.bookings.file, readAs: 'bookings catalogue', detail });
  }
  return contents;
}

/** Where a document of each shape belongs, when a records file holds it. */
const BELONGS: Partial<Record<IgnoredDocument['shape'], string>> = {
  limits: 'limits are read from ratelimit.yaml and ratelimit/*.yaml only',
  bookings: 'the booking catalogue is read from bookings.yaml only',
};

/** The warnings for documents of records files that hold no record and look like something else. */
export function documentWarnings(ignored: readonly IgnoredDocument[]): string[] {
  const warnings: string[] = [];
  for (const d of ignored) {
    if (d.shape === 'manifest') continue;
    const where = `${d.file}: document ${d.index} (${d.what})`;
    const belongs = BELONGS[d.shape];
    warnings.push(
      belongs
        ? `${where} looks like ${shapeText(d.shape)}, but ${basename(d.file)} is read as records and the document is ignored: ${belongs}`
        : `${where} is ${shapeText(d.shape)}: ignored`,
    );
  }
  return warnings;
}

/**
 * The documents of a file that is not a records file (limits, booking data)
 * that look like records or like the other kind, each a problem naming
 * where it belongs; none when the text cannot be parsed.
 */
export function misplacedDocuments(
  file: string,
  text: string,
  readAs: 'limits' | 'bookings',
  shown = displayPath(file),
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  try {
    let index = 0;
    for (const doc of parseYamlStream(text, { merge: true })) {
      index++;
      if (doc.errors.length > 0) continue;
      const value: unknown = doc.toJS({ maxAliasCount: 100 });
      const shape = documentShape(value);
      if (shape === readAs || shape === 'other') continue;
      const belongs =
        shape === 'limits'
          ? 'limits go in ratelimit.yaml or ratelimit/'
          : shape === 'bookings'
            ? 'the booking catalogue goes in bookings.yaml'
            : 'records go in a YAML file directly in the config folder (services.yaml, ...)';
      const holds = readAs === 'limits' ? "limits in envoyproxy/ratelimit's format" : 'the booking catalogue';
      problems.push(
        configProblem(
          { source: { file: shown } },
          `document ${index} (${documentWhat(value, shape)}) is ${shapeText(shape)}, but this file holds ${holds} only: ${belongs}`,
        ),
      );
    }
  } catch {
    // What the parser throws is the file's problem, which the check that read it reports.
  }
  return problems;
}

/** {@link misplacedDocuments} of the limits file shown as `shown`. */
export function misplacedInLimits(files: readonly LimitsFile[], shown: string): ConfigProblem[] {
  const file = files.find((f) => displayPath(f.file) === shown);
  return file ? misplacedDocuments(file.file, file.text, 'limits', shown) : [];
}
