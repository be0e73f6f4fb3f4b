/**
 * @module files/source
 * Where the files of a config folder are read from: the file system by
 * default, or whatever an embedding app gives instead (a store of its own,
 * or the file system wrapped to audit or to fail on purpose). Every read of
 * the folder at start and at reload goes through one.
 */
import { readdir } from 'node:fs/promises';
import { BrokenLinkError, FileTooLargeError, NotAFileError } from './bounded';
import { NotUtf8Error, readBoundedText } from './text';

/** Lists and reads the files of a config folder. */
export interface ConfigFileSource {
  /**
   * The names of the entries of the folder `dir`. Rejects as `fs.readdir`
   * does: an error with `code` `ENOENT` when there is no such folder,
   * `ENOTDIR` when it is a file.
   */
  list(dir: string): Promise<string[]>;
  /**
   * The text (UTF-8) of `file`. Rejects past `limit` bytes (a
   * {@link FileTooLargeError} of ./bounded), with a {@link NotUtf8Error}
   * (./text) when it is not UTF-8, with `code` `EISDIR` for a
   * folder (which is then passed over) and `ENOENT` when it is not there.
   */
  read(file: string, limit: number): Promise<string>;
}

/** The file system, read with {@link readBounded}. */
export const fileSystemSource: ConfigFileSource = {
  list: (dir) => readdir(dir),
  read: (file, limit) => readBoundedText(file, limit),
};

/**
 * The message of anything thrown, for a problem or a log line: an Error's
 * message, else the value in words. Never throws, whatever was thrown
 * (`undefined`, `null`, an object whose `message` getter throws).
 */
export function errorText(err: unknown): string {
  try {
    if (err instanceof Error) return err.message || err.name;
    if (typeof err === 'string') return err;
    const message = (err as { message?: unknown } | null | undefined)?.message;
    return typeof message === 'string' ? message : String(err);
  } catch {
    return 'an error that cannot be described';
  }
}

/** The errno code of an error, when it has one. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A read that failed in words already said, with the errno code the folder
 * check tells apart (`ENOENT`, `EISDIR`): a failure given again from a
 * recording of the folder (./recording).
 */
export class SaidReadError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SaidReadError';
  }
}

/**
 * Why a file could not be read, in words that follow its name: `is larger
 * than the file size limit ...`, `is a symbolic link to x, which does not
 * exist`, `is not a regular file ...`, `cannot be read (EACCES)`.
 */
export function whyUnreadable(err: unknown): string {
  if (
    err instanceof FileTooLargeError ||
    err instanceof NotAFileError ||
    err instanceof BrokenLinkError ||
    err instanceof NotUtf8Error ||
    err instanceof SaidReadError
  )
    return err.message;
  return `cannot be read (${errorCode(err) ?? errorText(err)})`;
}
