/**
 * @module bench/footprint
 * The footprint of one `gatehouse start` with the embedded defaults (PGlite
 * in a data folder), against a bare Koa app (peers/bare-koa.js), in
 * interleaved rounds, every server on CPU 0 (`taskset`), the requests from
 * this process:
 *
 * - start: from spawning the command to the first answer of
 *   `GET /v1/messages/1` (polled), for a bare Koa app, a later start (a data
 *   folder made before) and a first start (an empty one); and to the first
 *   200 of `/gateway/v0/check_ready`, when the bookings can answer too;
 * - memory: the resident memory of the server's whole process tree once it
 *   is ready (idle), and after traffic (messages, bookings listed, made,
 *   read), bookings included.
 *
 *   node --import tsx bench/footprint.ts    BENCH_ROUNDS rounds (default 5)
 *
 * On Node 22.12 or later, `--workers 2` is measured in the same rounds:
 * its first and later starts, and what the second worker adds. Where
 * PostgreSQL is installed, the same with `DATABASE_URL` (a new database of
 * one cluster each round): the gateway's resident memory, and PostgreSQL's
 * beside it (the proportional set size of its processes, which counts the
 * memory they share once).
 *
 * BENCH_FOOTPRINT_BASELINE=<folder>: another build of Gatehouse (a checkout
 * with its dist/ built) measured in the same rounds, to compare against:
 * with one worker, and with two where this Node has them.
 *
 * Run by `npm run bench -- footprint`; the goals are those of
 * docs/operations.md#memory-and-start.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPostgresBin, sharedPostgres, stopSharedPostgres, type PostgresCluster } from '../test/support/postgres';
import { ensureBuilt } from './harness/build';
import { writeGatehouseConfig } from './harness/configs';
import { supportsReusePort } from '../src/ports';
import { freePort, measureStart, treePssMb, type Start } from './harness/footprint-starts';
import type { ProcessSpec } from './harness/processes';
import { formatGoals, table, type Goal } from './harness/report';
import { median } from './harness/stats';

const ROOT = join(__dirname, '..');
const SERVER_CPU = 0;

/** The goals, as docs/operations.md states them. */
export const GOALS = { rssMb: 200, startVsKoa: 4, firstVsLater: 2 };

/** Starts `spec` on the server CPU and measures it. */
const measure = (spec: ProcessSpec, gateway: boolean, beside?: () => number, workers?: number) =>
  measureStart(spec, SERVER_CPU, gateway, beside, workers);

/** The memory of PostgreSQL's processes (the postmaster and its backends), shared memory counted once. */
function postgresMb(cluster: PostgresCluster): number {
  const pid = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return treePssMb(pid);
}

interface GatehouseStart {
  readonly config: string;
  /** The data folder, for PGlite. */
  readonly data?: string;
  /** A PostgreSQL database URL instead. */
  readonly databaseUrl?: string;
  /** Another build's folder (a baseline). */
  readonly root?: string;
  readonly workers?: number;
}

async function gatehouse(name: string, given: GatehouseStart): Promise<ProcessSpec> {
  const { config, root = ROOT, workers = 1 } = given;
  const port = await freePort();
  // A baseline build may know no --workers: given only when asked for.
  const start = ['start', '--port', String(port), '--grpc-port', '0', '--no-watch'];
  if (workers > 1) start.push('--workers', String(workers));
  const where = given.databaseUrl === undefined ? { GATEHOUSE_DATA: given.data! } : { DATABASE_URL: given.databaseUrl };
  return {
    name,
    command: process.execPath,
    args: [join(root, 'dist', 'cli', 'main.js'), ...start],
    env: { ...process.env, LOG_LEVEL: 'silent', DRAIN_DELAY_MS: '0', GATEHOUSE_CONFIG: config, ...where },
    cwd: root,
    port,
  };
}

/** The starts of one kind of gateway over the rounds: on an empty folder (or database), then again on it. */
interface Kind {
  readonly name: string;
  readonly first: Start[];
  readonly later: Start[];
  /** Measures one round's first and later start. */
  readonly round: () => Promise<void>;
}

/**
 * Measures BENCH_ROUNDS rounds, each a bare Koa start, and a first and a
 * later start of each kind of gateway, the kinds in an order that turns
 * from round to round.
 */
export async function runFootprint(
  rounds: number,
  baseline = process.env.BENCH_FOOTPRINT_BASELINE,
): Promise<{ text: string; goals: Goal[] }> {
  ensureBuilt(ROOT);
  const koa: Start[] = [];
  // The demo's, its per-user limit out of reach of the traffic.
  const config = writeGatehouseConfig(mkdtempSync(join(tmpdir(), 'gatehouse-bench-config-')), { kind: 'open' }, 1e9);
  const folders: string[] = [];
  const folder = (prefix: string) => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    folders.push(dir);
    return dir;
  };
  const kinds: Kind[] = [];
  /** A kind whose each round starts on a new place given by `where`, once empty and once again. */
  const kind = (name: string, where: () => Promise<Omit<GatehouseStart, 'config'>>, beside?: () => number) => {
    const made: Kind = {
      name,
      first: [],
      later: [],
      async round() {
        const given = { config, ...(await where()) };
        made.first.push(await measure(await gatehouse(`${name}, first start`, given), true, beside, given.workers));
        made.later.push(await measure(await gatehouse(`${name}, later start`, given), true, beside, given.workers));
      },
    };
    kinds.push(made);
    return made;
  };
  const embedded = kind('gatehouse', async () => ({ data: folder('gatehouse-bench-footprint-') }));
  // Two workers, on a Node that listens with reusePort: what a second worker adds.
  const withWorkers = supportsReusePort();
  const two = withWorkers
    ? kind('--workers 2', async () => ({ data: folder('gatehouse-bench-footprint-workers-'), workers: 2 }))
    : undefined;
  const base =
    baseline === undefined
      ? undefined
      : kind('baseline', async () => ({ data: folder('gatehouse-bench-footprint-baseline-'), root: baseline }));
  // What a second worker adds in the baseline, to set beside what it adds now.
  const baseTwo =
    baseline === undefined || !withWorkers
      ? undefined
      : kind('baseline, --workers 2', async () => ({
          data: folder('gatehouse-bench-footprint-baseline-workers-'),
          root: baseline,
          workers: 2,
        }));
  // The same with PostgreSQL, a new database each round: the gateway's memory, and PostgreSQL's beside it.
  const postgres = findPostgresBin() === undefined ? undefined : await sharedPostgres();
  const pgMb = postgres && (() => postgresMb(postgres));
  if (postgres) {
    kind('DATABASE_URL', async () => ({ databaseUrl: await postgres.createDatabase('footprint') }), pgMb);
    if (withWorkers)
      kind(
        '--workers 2, DATABASE_URL',
        async () => ({ databaseUrl: await postgres.createDatabase('footprint'), workers: 2 }),
        pgMb,
      );
  }
  try {
    for (let round = 0; round < rounds; round++) {
      const port = await freePort();
      const bare: ProcessSpec = {
        name: 'bare Koa',
        command: process.execPath,
        args: [join(__dirname, 'peers', 'bare-koa.js')],
        env: { ...process.env, NODE_ENV: 'production', PORT: String(port) },
        port,
      };
      const turns: (() => Promise<void>)[] = [
        async () => void koa.push(await measure(bare, false)),
        ...kinds.map((k) => k.round),
      ];
      // A different order each round, so that no one always follows the same other.
      for (let i = 0; i < round % turns.length; i++) turns.push(turns.shift()!);
      for (const turn of turns) await turn();
    }
  } finally {
    for (const dir of [config, ...folders]) rmSync(dir, { recursive: true, force: true });
    if (postgres) await stopSharedPostgres();
  }
  return report(rounds, koa, kinds, { embedded, two, base, baseTwo });
}

/** The table and the goals of the rounds measured. */
function report(
  rounds: number,
  koa: Start[],
  kinds: readonly Kind[],
  named: { embedded: Kind; two?: Kind; base?: Kind; baseTwo?: Kind },
): { text: string; goals: Goal[] } {
  const { embedded, two, base, baseTwo } = named;
  const ms = (x: number) => `${Math.round(x)} ms`;
  const mb = (x: number) => `${Math.round(x)} MB`;
  const med = (list: Start[], pick: (s: Start) => number) => median(list.map(pick));
  const ratio = (a: Start[], b: Start[], pick: (s: Start) => number) => median(a.map((s, i) => pick(s) / pick(b[i])));
  const row = (name: string, l: Start[]) => [
    name,
    ms(med(l, (s) => s.answerMs)),
    ms(med(l, (s) => s.answerCpuMs)),
    ms(med(l, (s) => s.readyMs)),
    mb(med(l, (s) => s.idleMb)),
    `${mb(med(l, (s) => s.rssMb))} (${mb(Math.max(...l.map((s) => s.rssMb)))})`,
    l[0].besideMb === undefined ? '' : mb(med(l, (s) => s.besideMb!)),
  ];
  const rows = [
    ['', 'first answer', 'CPU by then', 'bookings ready', 'RSS idle', 'RSS after traffic (max)', 'PostgreSQL (PSS)'],
    [
      'bare Koa',
      ms(med(koa, (s) => s.answerMs)),
      ms(med(koa, (s) => s.answerCpuMs)),
      '',
      mb(med(koa, (s) => s.idleMb)),
      '',
      '',
    ],
    ...kinds.flatMap((k) => [row(`${k.name}, later start`, k.later), row(`${k.name}, first start`, k.first)]),
  ];
  /** A later start of `kind` against the bare Koa app's start, in time and in CPU. */
  const againstKoa = (name: string, kind: Kind) => [
    `${name} / bare Koa`,
    `${ratio(kind.later, koa, (s) => s.answerMs).toFixed(2)}x`,
    `${ratio(kind.later, koa, (s) => s.answerCpuMs).toFixed(2)}x`,
    '',
    '',
    '',
    '',
  ];
  if (base) rows.push(againstKoa('baseline later start', base));
  /** What `two` workers add to `one`, on a later start. */
  const added = (name: string, two: Kind, one: Kind) => [
    `${name} / 1, later start`,
    `${ratio(two.later, one.later, (s) => s.answerMs).toFixed(2)}x`,
    `${ratio(two.later, one.later, (s) => s.answerCpuMs).toFixed(2)}x`,
    `${ratio(two.later, one.later, (s) => s.readyMs).toFixed(2)}x`,
    `+${mb(med(two.later, (s) => s.idleMb) - med(one.later, (s) => s.idleMb))}`,
    `+${mb(med(two.later, (s) => s.rssMb) - med(one.later, (s) => s.rssMb))}`,
    '',
  ];
  if (base && baseTwo) rows.push(added('baseline --workers 2', baseTwo, base));
  if (two) rows.push(added('--workers 2', two, embedded), againstKoa('--workers 2 later start', two));
  const startRatio = ratio(embedded.later, koa, (s) => s.answerMs);
  const startCpuRatio = ratio(embedded.later, koa, (s) => s.answerCpuMs);
  const firstRatio = ratio(embedded.first, embedded.later, (s) => s.readyMs);
  const firstAnswerRatio = ratio(embedded.first, embedded.later, (s) => s.answerMs);
  const rss = Math.max(...embedded.first.map((s) => s.rssMb), ...embedded.later.map((s) => s.rssMb));
  const goals: Goal[] = [
    {
      title: `resident memory after traffic <= ${GOALS.rssMb} MB, first and later starts`,
      detail: `largest of ${rounds * 2} starts ${mb(rss)}`,
      met: rss <= GOALS.rssMb,
    },
    {
      title: `a later start answers within ${GOALS.startVsKoa}x a bare Koa app's start`,
      detail: `${startRatio.toFixed(2)}x (median of same-round ratios; CPU used by the first answer ${startCpuRatio.toFixed(2)}x)`,
      met: startRatio <= GOALS.startVsKoa,
    },
    {
      title: `a first start takes at most ${GOALS.firstVsLater}x a later start`,
      detail: `to bookings ready ${firstRatio.toFixed(2)}x, to the first answer ${firstAnswerRatio.toFixed(2)}x`,
      met: firstRatio <= GOALS.firstVsLater,
    },
  ];
  return { text: table(rows), goals };
}

if (require.main === module) {
  const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 5));
  runFootprint(rounds).then(
    ({ text, goals }) => {
      console.log(`${text}\n\n${formatGoals(goals)}`);
      process.exitCode = goals.every((g) => g.met !== false) ? 0 : 1;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 2;
    },
  );
}
