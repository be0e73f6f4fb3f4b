/**
 * @module files/bounded
 * Reading a file the gateway is configured with (records, limits, users,
 * booking data, TLS files) whole, but never more than a limit, and only a
 * regular file: a file of gigabytes, or a name pointing at `/dev/zero` or a
 * FIFO, would otherwise take all the memory or block for good.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';

/** The largest file read by default: 8 MiB, eight times what a Kubernetes ConfigMap holds. */
export const DEFAULT_FILE_SIZE_LIMIT = 8 * 1024 * 1024;

/**
 * Opened without blocking: opening a FIFO for reading otherwise waits for a
 * writer, holding a thread of libuv's pool (or the event loop) until one comes.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** `8 MiB`, `512 KiB`, `100 bytes`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size && bytes % (size / 1024) === 0) return `${Number((bytes / size).toFixed(3))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** A file larger than the limit it was read with. */
export class FileTooLargeError extends Error {
  readonly code = 'EFBIG';
  constructor(
    readonly file: string,
    /** Its size as stat saw it; undefined when it grew past the limit while it was read. */
    readonly size: number | undefined,
    readonly limit: number,
  ) {
    super(
      `is larger than the file size limit of ${formatBytes(limit)} (${size === undefined ? 'it grew while it was read' : formatBytes(size)}): ` +
        'refused; raise fileSizeLimit (GATEHOUSE_FILE_SIZE_LIMIT) if it is meant to be that large',
    );
    this.name = 'FileTooLargeError';
  }
}

/** A name that is no regular file: a FIFO, a device (`/dev/zero`), a socket. */
export class NotAFileError extends Error {
  readonly code = 'ENOTREG';
  constructor(readonly file: string) {
    super('is not a regular file (a FIFO, a device or a socket): refused');
    this.name = 'NotAFileError';
  }
}

/** A symbolic link whose target is gone. */
export class BrokenLinkError extends Error {
  readonly code = 'ENOENT';
  constructor(
    readonly file: string,
    readonly target: string,
  ) {
    super(`is a symbolic link to ${target}, which does not exist`);
    this.name = 'BrokenLinkError';
  }
}

/** An error of Node's with the given errno code, as `fs` throws them. */
function errnoError(code: string, file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${file}`), { code, path: file });
}

/** What is wrong with a file opened for reading, as stat tells it; undefined when it may be read. */
function refusal(file: string, stats: Stats, limit: number): Error | undefined {
  if (stats.isDirectory()) return errnoError('EISDIR', file);
  if (!stats.isFile()) return new NotAFileError(file);
  if (stats.size > limit) return new FileTooLargeError(file, stats.size, limit);
  return undefined;
}

/** Why a name could not be opened: a link to nowhere is said as such. */
function openFailure(file: string, err: unknown, target: () => string | undefined): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return err;
  const to = target();
  return to === undefined ? err : new BrokenLinkError(file, to);
}

function linkTargetSync(file: string): string | undefined {
  try {
    return lstatSync(file).isSymbolicLink() ? readlinkSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bytes of `file`, at most `limit` of them. Rejects with
 * {@link FileTooLargeError} past the limit (also when the file grows while it
 * is read), {@link NotAFileError} for what is no regular file, an `EISDIR`
 * error for a folder, {@link BrokenLinkError} for a link to nowhere, and
 * Node's own errors otherwise.
 */
export async function readBounded(file: string, limit: number): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (err) {
    const target = await lstat(file)
      .then((s) => (s.isSymbolicLink() ? readlink(file) : undefined))
      .catch(() => undefined);
    throw openFailure(file, err, () => target);
  }
  try {
    const refused = refusal(file, await handle.stat(), limit);
    if (refused) throw refused;
    // One byte more than the limit: a file that grew since the stat is seen to be too large.
    const buffer = Buffer.allocUnsafe(limit + 1 > 65536 ? 65536 : limit + 1);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, limit + 1 - total), null);
      if (bytesRead === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, bytesRead)));
      total += bytesRead;
      if (total > limit) throw new FileTooLargeError(file, undefined, limit);
    }
    return Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

/** {@link readBounded}, synchronously: for what is read once at start (TLS files, a module built in code). */
export function readBoundedSync(file: string, limit: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    throw openFailure(file, err, () => linkTargetSync(file));
  }
  try {
    const stats = fstatSync(fd);
    const refused = refusal(file, stats, limit);
    if (refused) throw refused;
    // Room for what stat said and one byte more; a file that grew meanwhile gets more, up to one byte past the limit.
    let buffer = Buffer.allocUnsafe(Math.min(stats.size, limit) + 1);
    let total = 0;
    for (;;) {
      if (total === buffer.length) {
        if (total > limit) throw new FileTooLargeError(file, undefined, limit);
        buffer = Buffer.concat([buffer, Buffer.allocUnsafe(Math.min(buffer.length, limit + 1 - buffer.length))]);
      }
      const read = readSync(fd, buffer, total, buffer.length - total, null);
      if (read === 0) break;
      total += read;
    }
    if (total > limit) throw new FileTooLargeError(file, undefined, limit);
    return buffer.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}
