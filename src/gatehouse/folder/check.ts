/**
 * @module gatehouse/folder/check
 * Parses and validates the texts of a config folder: the records, the
 * limits, the users, the booking data. Pure (no file access, no clock), so
 * that it runs alike on the event loop and on a worker thread. Whatever a
 * file throws is a problem naming that file: a check never throws.
 */
import { parseHtpasswd, type ParsedUsers } from '../../auth';
import { BookingDataError, parseBookingFile, type BookingData } from '../../bookings';
import { errorText } from '../../files';
import {
  configProblem,
  configWarnings,
  parseConfigFiles,
  type ConfigProblem,
  type EmissaryReport,
  type GatewayConfig,
  type IgnoredDocument,
} from '../../gateway';
import { displayPath, LimitsConfigError, parseLimitsFiles, type LoadedLimits } from '../../ratelimit';
import {
  describeContents,
  documentWarnings,
  misplacedDocuments,
  misplacedInLimits,
  type FileContents,
} from './contents';
import type { FolderTexts } from './read';

/** What a check found: the problems and warnings, and what each kind of file holds when it is valid. */
export interface CheckedFolder {
  problems: ConfigProblem[];
  /** What loads but deserves a look (a weak hash, a limits key with no effect), one line each, naming its file. */
  warnings: string[];
  /**
   * The warnings of {@link warnings} about what a file was read as (a
   * document a records file ignores that looks like limits, no limits file):
   * the folder's report shows them beside its files.
   */
  folderWarnings?: string[];
  config?: GatewayConfig;
  limits?: LoadedLimits;
  users?: ParsedUsers;
  bookings?: BookingData;
  /** What became of the Emissary resources read, and the records left to another `ambassador_id`, valid or not. */
  emissary?: EmissaryReport;
  /** What each file read was read as, and what it holds. */
  contents?: FileContents[];
}

/**
 * Most problems reported of one folder: a file of 200 000 wrong entries
 * would otherwise make a log line, and a diag page, of as many.
 */
export const MAX_PROBLEMS = 100;

function fileProblem(file: string, message: string): ConfigProblem {
  return configProblem({ source: { file } }, message);
}

/** The first {@link MAX_PROBLEMS} problems, and how many more there were. */
export function capProblems(problems: ConfigProblem[]): ConfigProblem[] {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const more = problems.length - MAX_PROBLEMS;
  return [
    ...problems.slice(0, MAX_PROBLEMS),
    configProblem({}, `and ${more} more problem${more === 1 ? '' : 's'}: put these right first`),
  ];
}

/** The first {@link MAX_PROBLEMS} warnings, and how many more there were: each is a log line at every reload. */
function capWarnings(warnings: string[]): string[] {
  if (warnings.length <= MAX_PROBLEMS) return warnings;
  return [...warnings.slice(0, MAX_PROBLEMS), `and ${warnings.length - MAX_PROBLEMS} more warnings`];
}

/** Runs one kind's check; whatever it throws that it does not report itself is a problem of its files. */
function guarded(files: readonly string[], problems: ConfigProblem[], check: () => void): void {
  try {
    check();
  } catch (err) {
    problems.push(fileProblem(files.join(', '), `cannot be checked: ${errorText(err)}`));
  }
}

/** Checks every text of `texts`. */
export function checkTexts(texts: FolderTexts): CheckedFolder {
  const problems: ConfigProblem[] = [];
  const warnings: string[] = [];
  const folderWarnings: string[] = [];
  const checked: CheckedFolder = { problems, warnings };

  const { records, limits, users, bookings } = texts;
  let ignored: IgnoredDocument[] = [];
  if (records) {
    guarded(
      records.map((f) => f.file),
      problems,
      () => {
        const result = parseConfigFiles(records, {
          annotationDomain: texts.annotationDomain,
          ambassadorId: texts.ambassadorId,
        });
        if (result.emissary) checked.emissary = result.emissary;
        ignored = result.ignored ?? [];
        folderWarnings.push(...documentWarnings(ignored));
        if (result.ok) {
          checked.config = result.config;
          warnings.push(...configWarnings(result.config));
        } else problems.push(...result.problems);
      },
    );
  }

  if (users) {
    guarded([users.file], problems, () => {
      const parsed = parseHtpasswd(users.text);
      // A password is never quoted: problems name the line.
      for (const p of parsed.problems)
        problems.push(fileProblem(users.file, p.line > 0 ? `line ${p.line}: ${p.message}` : p.message));
      if (parsed.problems.length > 0) return;
      for (const w of parsed.warnings) warnings.push(`${users.file}: line ${w.line}: ${w.message}`);
      if (parsed.users.size === 0)
        warnings.push(`${users.file}: names no user: every request to an auth-protected route is refused`);
      checked.users = parsed;
    });
  }

  if (limits) {
    guarded(
      limits.map((f) => displayPath(f.file)),
      problems,
      () => {
        try {
          const loaded = parseLimitsFiles(limits);
          checked.limits = { ...loaded, warnings: capWarnings(loaded.warnings) };
          warnings.push(...checked.limits.warnings);
        } catch (err) {
          if (!(err instanceof LimitsConfigError)) throw err;
          problems.push(...misplacedInLimits(limits, err.file));
          for (const p of err.problems) problems.push(fileProblem(err.file, p));
        }
      },
    );
  }

  if (bookings) {
    guarded([bookings.file], problems, () => {
      try {
        checked.bookings = parseBookingFile(bookings.text, bookings.file);
      } catch (err) {
        if (!(err instanceof BookingDataError)) throw err;
        problems.push(...misplacedDocuments(bookings.file, bookings.text, 'bookings', bookings.file));
        for (const p of err.problems) problems.push(fileProblem(err.file, p));
      }
    });
  }
  const limitsService = checked.config?.rateLimitService;
  if (limits?.length === 0 && limitsService?.service === 'ratelimit')
    folderWarnings.push(
      `no limits: the folder has no ratelimit.yaml and no ratelimit/, so the built-in rate-limit service that RateLimitService ${limitsService.name} asks answers OK to every request`,
    );
  guarded([], problems, () => {
    checked.contents = describeContents(texts, checked, ignored);
  });
  checked.problems = capProblems(problems);
  checked.folderWarnings = capWarnings(folderWarnings);
  checked.warnings = capWarnings([...checked.folderWarnings, ...warnings]);
  return checked;
}
