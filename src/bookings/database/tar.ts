/**
 * @module bookings/database/tar
 * The tar format (POSIX ustar) of the ready-made database: folders and
 * plain files only, which is all a Postgres data folder holds. Written by
 * {@link packTar}, read back by {@link readTar}, which refuses anything
 * else (links, devices, names that climb out of the folder); or taken in
 * as it streams by {@link untarInto}, which holds a block and a chunk at a
 * time, never the archive.
 */
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** One entry: a folder, or a file and its bytes. Paths are relative and use `/`. */
export type TarEntry = { kind: 'folder'; path: string } | { kind: 'file'; path: string; data: Uint8Array };

const BLOCK = 512;

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function header(path: string, size: number, type: '0' | '5', mode: number): Buffer {
  if (Buffer.byteLength(path) > 100) throw new Error(`tar: the name ${path} is longer than 100 bytes`);
  const block = Buffer.alloc(BLOCK);
  block.write(path, 0, 'utf8');
  block.write(octal(mode, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(size, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii');
  block.write(' '.repeat(8), 148, 'ascii');
  block.write(type, 156, 'ascii');
  block.write('ustar\x0000', 257, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(octal(sum, 7) + ' ', 148, 'ascii');
  return block;
}

/** The entries as one tar archive. */
export function packTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    if (entry.kind === 'folder') {
      parts.push(header(`${entry.path}/`, 0, '5', 0o700));
      continue;
    }
    parts.push(header(entry.path, entry.data.length, '0', 0o600), Buffer.from(entry.data));
    const pad = (BLOCK - (entry.data.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

function field(block: Buffer, at: number, width: number): string {
  const text = block.toString('utf8', at, at + width);
  const end = text.indexOf('\0');
  return end === -1 ? text : text.slice(0, end);
}

/** A relative path of plain names, or a throw: nothing may be written outside the folder it is read into. */
function safePath(name: string): string {
  const path = name.replace(/\/+$/, '');
  const parts = path.split('/');
  if (path === '' || parts.some((p) => p === '' || p === '.' || p === '..'))
    throw new Error(`tar: the entry ${JSON.stringify(name)} names no plain path inside the folder`);
  return path;
}

/** What a header block says: the end of the archive, or an entry and the size of its data. */
function readHeader(
  block: Buffer,
  at: number,
): { end: true } | { end: false; kind: TarEntry['kind']; path: string; size: number } {
  if (block.every((byte) => byte === 0)) return { end: true };
  const stored = parseInt(field(block, 148, 8).trim(), 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i];
  if (stored !== sum) throw new Error(`tar: the header at byte ${at} is damaged`);
  const prefix = field(block, 345, 155);
  const path = safePath(prefix ? `${prefix}/${field(block, 0, 100)}` : field(block, 0, 100));
  const type = String.fromCharCode(block[156]);
  if (type === '5') return { end: false, kind: 'folder', path, size: 0 };
  if (type !== '0' && type !== '\0')
    throw new Error(`tar: ${path} is neither a folder nor a plain file (type ${JSON.stringify(type)})`);
  return { end: false, kind: 'file', path, size: parseInt(field(block, 124, 12).trim() || '0', 8) };
}

/** The entries of a tar archive made by {@link packTar}; throws on a damaged archive or an entry of another kind. */
export function readTar(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  for (let at = 0; at + BLOCK <= archive.length;) {
    const header = readHeader(archive.subarray(at, at + BLOCK), at);
    if (header.end) return entries;
    at += BLOCK;
    if (header.kind === 'folder') entries.push({ kind: 'folder', path: header.path });
    else {
      if (at + header.size > archive.length) throw new Error(`tar: ${header.path} is cut short`);
      entries.push({ kind: 'file', path: header.path, data: archive.subarray(at, at + header.size) });
    }
    at += Math.ceil(header.size / BLOCK) * BLOCK;
  }
  throw new Error('tar: the archive ends without its end blocks');
}

/** What {@link untarInto} made: the files and folders, by their full paths. */
export interface Untarred {
  files: string[];
  folders: string[];
}

/**
 * Writes the entries of the archive streaming by in `chunks` under
 * `folder` (which must exist): folders 0700, files 0600, none there
 * before. Nothing is synced: the caller syncs what it lists.
 */
export async function untarInto(chunks: AsyncIterable<Buffer>, folder: string): Promise<Untarred> {
  const made: Untarred = { files: [], folders: [] };
  let header = Buffer.alloc(0);
  let offset = 0;
  let file: { handle: FileHandle; left: number; pad: number; path: string } | undefined;
  let skip = 0;
  let ended = false;
  const finishFile = async () => {
    await file!.handle.close();
    skip = file!.pad;
    file = undefined;
  };
  try {
    for await (const chunk of chunks) {
      let at = 0;
      while (at < chunk.length && !ended) {
        if (file) {
          const part = chunk.subarray(at, at + file.left);
          await file.handle.write(part);
          file.left -= part.length;
          at += part.length;
          if (file.left === 0) await finishFile();
          continue;
        }
        if (skip > 0) {
          const n = Math.min(skip, chunk.length - at);
          skip -= n;
          at += n;
          continue;
        }
        const n = Math.min(BLOCK - header.length, chunk.length - at);
        header = Buffer.concat([header, chunk.subarray(at, at + n)]);
        at += n;
        if (header.length < BLOCK) continue;
        const entry = readHeader(header, offset);
        header = Buffer.alloc(0);
        if (entry.end) {
          ended = true;
          break;
        }
        const path = join(folder, entry.path);
        if (entry.kind === 'folder') {
          await mkdir(path, { mode: 0o700 });
          made.folders.push(path);
        } else {
          file = {
            handle: await open(path, 'wx', 0o600),
            left: entry.size,
            pad: (BLOCK - (entry.size % BLOCK)) % BLOCK,
            path,
          };
          made.files.push(path);
          if (entry.size === 0) await finishFile();
        }
        offset += BLOCK + entry.size + (entry.kind === 'file' ? (BLOCK - (entry.size % BLOCK)) % BLOCK : 0);
      }
      if (ended) break;
    }
  } finally {
    await file?.handle.close();
  }
  if (!ended) throw new Error(file ? `tar: ${file.path} is cut short` : 'tar: the archive ends without its end blocks');
  return made;
}
