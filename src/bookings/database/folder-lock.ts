/**
 * @module bookings/database/folder-lock
 * One process a data folder. PGlite takes no lock of its own (the
 * `postmaster.pid` it writes names no real process), and two processes
 * writing one folder corrupt it for good. The lock is a listening socket
 * named after the folder's device and inode: on Linux in the abstract
 * namespace, on Windows a named pipe, so that the kernel frees it when the
 * process ends however it ends (a SIGKILL, a crash); elsewhere a socket file,
 * taken over once nothing answers on it.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The file in the folder that names the process holding it, for whoever finds it locked. */
export const PID_FILE = 'gatehouse.pid';

/** A held lock. */
export interface FolderLock {
  release(): Promise<void>;
}

/** The folder is held by another process (or another Gatehouse in this one). */
export class DataFolderInUseError extends Error {
  constructor(
    readonly folder: string,
    readonly holder: number | undefined,
  ) {
    super(
      `the data folder ${folder} is in use by ${holder === process.pid ? 'another Gatehouse in this process' : `another process${holder === undefined ? '' : ` (pid ${holder})`}`}: ` +
        'one process a data folder; stop it, give this one another folder (--data, GATEHOUSE_DATA), ' +
        'or let several processes share bookings through PostgreSQL (--database-url, DATABASE_URL)',
    );
    this.name = 'DataFolderInUseError';
  }
}

function addressOf(folder: string): string {
  const { dev, ino } = statSync(folder);
  const id = createHash('sha256').update(`${dev}:${ino}`).digest('hex').slice(0, 32);
  if (process.platform === 'linux') return `\0gatehouse-data-${id}`;
  if (process.platform === 'win32') return `\\\\.\\pipe\\gatehouse-data-${id}`;
  return join(tmpdir(), `gatehouse-data-${id}.sock`);
}

function listen(server: net.Server, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Whether a socket file is left by a process that is gone: nothing answers on it. */
function answers(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function holderOf(folder: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(folder, PID_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Locks `folder` (which must exist) for this process.
 * @throws {DataFolderInUseError} when another process, or another lock in this one, holds it.
 */
export async function lockFolder(folder: string): Promise<FolderLock> {
  const address = addressOf(folder);
  const server = net.createServer((socket) => socket.destroy());
  try {
    await listen(server, address);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    const fileSocket = !address.startsWith('\0') && !address.startsWith('\\\\');
    if (!fileSocket || (await answers(address))) throw new DataFolderInUseError(folder, holderOf(folder));
    unlinkSync(address);
    await listen(server, address);
  }
  // The lock must not keep the process alive.
  server.unref();
  const pidFile = join(folder, PID_FILE);
  writeFileSync(pidFile, `${process.pid}\n`);
  let released: Promise<void> | undefined;
  return {
    release() {
      released ??= new Promise<void>((resolve) => {
        if (holderOf(folder) === process.pid) rmSync(pidFile, { force: true });
        server.close(() => resolve());
      });
      return released;
    },
  };
}
