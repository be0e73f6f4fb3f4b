/**
 * @module test/support/postgres
 * A real PostgreSQL for the tests: one throwaway cluster for the whole run,
 * started on first use (`initdb` into a temporary folder, `postgres` on a
 * free loopback port, as a user other than root, which postgres refuses to
 * run as), a database of its own for each caller, and stopped by the root
 * hook (./root-hooks) when the run ends. It never touches a server it did
 * not start. Its user has a password, so that tests can check it is never
 * shown.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';

/** The user and password of the test cluster's superuser, as the URLs name them. */
export const PG_USER = 'gatehouse';
export const PG_PASSWORD = 'pw-never-shown-7f3a';

/** A running test cluster. */
export interface PostgresCluster {
  readonly port: number;
  /** The folder holding the cluster (and its socket). */
  readonly dir: string;
  /** A URL of `database` on this cluster, with the password. */
  url(database: string): string;
  /** Makes a new, empty database and resolves its URL. */
  createDatabase(prefix: string): Promise<string>;
  /** Runs SQL as the superuser on `database`. */
  query<R = Record<string, unknown>>(database: string, text: string, params?: unknown[]): Promise<R[]>;
}

/** Where `initdb` and `postgres` are: on PATH, else in Debian's /usr/lib/postgresql/<version>/bin, the newest. */
export function findPostgresBin(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^[0-9]+$/.test(v) && existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], 'bin') : undefined;
}

/** The uid and gid to run the cluster as: ours, unless we are root (then `postgres`'s, else `nobody`'s). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const user of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      return { uid, gid };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error('the tests run as root, and there is neither a postgres nor a nobody user to run PostgreSQL as');
}

let starting: Promise<PostgresCluster> | undefined;
let child: ChildProcess | undefined;
let clusterDir: string | undefined;
let databases = 0;

async function start(): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      'PostgreSQL is not installed (no initdb and postgres on PATH or in /usr/lib/postgresql): .ci/run installs the postgresql package',
    );
  const owner = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pg-'));
  clusterDir = dir;
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${PG_PASSWORD}\n`);
  if (owner) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(pwfile, owner.uid, owner.gid);
  }
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  execFileSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', PG_USER, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-sync'],
    {
      ...as,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const port = await freePort();
  // fsync off: what these tests kill is the gateway, never the cluster, and on a loaded machine a sync costs seconds.
  const proc = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ],
    { ...as, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child = proc;
  let err = '';
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-4000)));
  const url = (database: string) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`;
  // Ready once it takes a connection.
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`postgres exited with ${proc.exitCode}: ${err}`);
    const client = new Client({ connectionString: url('postgres') });
    try {
      await client.connect();
      await client.end();
      break;
    } catch {
      await client.end().catch(() => undefined);
      if (i > 300) throw new Error(`postgres did not take connections within 30 s: ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  async function query<R>(database: string, text: string, params?: unknown[]): Promise<R[]> {
    const client = new Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as R[];
    } finally {
      await client.end();
    }
  }
  return {
    port,
    dir,
    url,
    query,
    async createDatabase(prefix) {
      const name = `${prefix.replace(/[^a-z0-9_]/g, '_')}_${++databases}`;
      await query('postgres', `CREATE DATABASE ${name}`);
      return url(name);
    },
  };
}

/** The run's cluster, started on first use. */
export function sharedPostgres(): Promise<PostgresCluster> {
  starting ??= start();
  return starting;
}

/** Stops the cluster (if one was started) and removes its folder. */
export async function stopSharedPostgres(): Promise<void> {
  const proc = child;
  child = undefined;
  starting = undefined;
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    // Immediate shutdown: nothing here needs keeping.
    proc.kill('SIGQUIT');
    await exited;
  }
  const dir = clusterDir;
  clusterDir = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
}
