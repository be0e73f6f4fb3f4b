/**
 * @module gatehouse/module-files
 * Checks the files the built-in modules read (the users file, the limits,
 * the booking data) without applying them, so that a reload can refuse a
 * folder with any bad file before it changes anything.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseHtpasswd, UsersFileError } from '../auth';
import { BOOKINGS_FILE, BookingDataError, loadBookingData } from '../bookings';
import { configProblem, type ConfigProblem } from '../gateway';
import { loadLimitsDir, LimitsConfigError } from '../ratelimit';
import { USERS_FILE } from './builtins';

/** Which files to check: those of the built-in modules that are in service. */
export interface ModuleFiles {
  configDir: string;
  /** The built-in auth service reads `users.htpasswd`. */
  users: boolean;
  /** The built-in rate-limit service reads `ratelimit.yaml` or `ratelimit/`. */
  limits: boolean;
  /** The booking modules read `bookings.yaml`. */
  bookings: boolean;
}

/** What the check found: the problems, and the users file as read (to tell whether it changed). */
export interface ModuleFilesCheck {
  problems: ConfigProblem[];
  /** What loads but deserves a look (a weak hash, a limits key with no effect), one line each, naming its file. */
  warnings: string[];
  usersText?: string;
}

function fileProblem(file: string, message: string): ConfigProblem {
  return configProblem({ source: { file } }, message);
}

/**
 * Reads and validates every file of `files`. Each problem names its file (and
 * line or field); a password is never quoted.
 */
export async function checkModuleFiles(files: ModuleFiles): Promise<ModuleFilesCheck> {
  const problems: ConfigProblem[] = [];
  const warnings: string[] = [];
  let usersText: string | undefined;

  if (files.users) {
    const file = join(files.configDir, USERS_FILE);
    try {
      usersText = await readFile(file, 'utf8');
      const parsed = parseHtpasswd(usersText);
      if (parsed.problems.length > 0) throw new UsersFileError(file, parsed.problems);
      for (const w of parsed.warnings) warnings.push(`${file}: line ${w.line}: ${w.message}`);
      if (parsed.users.size === 0) warnings.push(`${file}: names no user: every request to an auth-protected route is refused`);
    } catch (err) {
      if (err instanceof UsersFileError) {
        for (const p of err.problems) problems.push(fileProblem(file, p.line > 0 ? `line ${p.line}: ${p.message}` : p.message));
      } else {
        problems.push(fileProblem(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`));
      }
      usersText = undefined;
    }
  }

  if (files.limits) {
    try {
      warnings.push(...loadLimitsDir(files.configDir).warnings);
    } catch (err) {
      if (err instanceof LimitsConfigError) for (const p of err.problems) problems.push(fileProblem(err.file, p));
      else problems.push(fileProblem(join(files.configDir, 'ratelimit.yaml'), `cannot be read: ${(err as Error).message}`));
    }
  }

  if (files.bookings) {
    try {
      await loadBookingData(files.configDir);
    } catch (err) {
      if (err instanceof BookingDataError) for (const p of err.problems) problems.push(fileProblem(err.file, p));
      else problems.push(fileProblem(join(files.configDir, BOOKINGS_FILE), (err as Error).message));
    }
  }
  return { problems, warnings, usersText };
}

/**
 * Checks every module file the folder holds, as a start would read them: the
 * users file and the booking data when present, the limits always (an absent
 * file is no limits). Used before anything is built, so that one run reports
 * the problems of every file together with those of the records.
 */
export function checkFolderFiles(configDir: string): Promise<ModuleFilesCheck> {
  return checkModuleFiles({
    configDir,
    users: existsSync(join(configDir, USERS_FILE)),
    limits: true,
    bookings: existsSync(join(configDir, BOOKINGS_FILE)),
  });
}
