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
 * its first and later starts, and what the second worker adds.
 *
 * BENCH_FOOTPRINT_BASELINE=<folder>: another build of Gatehouse (a checkout
 * with its dist/ built) measured in the same rounds, to compare against.
 *
 * Run by `npm run bench -- footprint`; the goals are those of
 * docs/operations.md#memory-and-start.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from './harness/build';
import { writeGatehouseConfig } from './harness/configs';
import { supportsReusePort } from '../src/ports';
import { processTree, startPinned, type ProcessSpec } from './harness/processes';
import { formatGoals, table, type Goal } from './harness/report';
import { median } from './harness/stats';

const ROOT = join(__dirname, '..');
const SERVER_CPU = 0;
const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
const HOTEL = { hotel_id: 'b1240207-0df8-456d-9ee3-752904b6062b', check_in: '2099-12-20', nights: 2 };

/** The goals, as docs/operations.md states them. */
export const GOALS = { rssMb: 200, startVsKoa: 4, firstVsLater: 2 };

/** A free port, for a server that cannot be asked which one it took. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** Resolves the ms from `since` to the first answer `status` of `path`, asked again at once after each failure. */
async function firstAnswer(port: number, path: string, status: number, since: number, exited: () => boolean) {
  for (;;) {
    if (exited()) throw new Error(`the server on port ${port} exited before ${path} answered ${status}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === status) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Traffic a user of the demo makes: messages, and bookings listed, made and read. */
async function traffic(port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}`;
  const auth = { Authorization: ALICE };
  const one = async (i: number) => {
    const answers: Response[] = [];
    answers.push(await fetch(`${url}/v1/messages/${1 + (i % 3)}`));
    answers.push(await fetch(`${url}/v1/hotels/bookings/`, { headers: auth }));
    if (i % 4 === 0) {
      const made = await fetch(`${url}/v1/hotels/bookings/`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify(HOTEL),
      });
      answers.push(made);
      const { id } = (await made.clone().json()) as { id: string };
      answers.push(await fetch(`${url}/v1/hotels/bookings/${id}`, { headers: auth }));
    }
    for (const res of answers) {
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`${res.url} answered ${res.status} during the traffic`);
    }
  };
  // 200 rounds of a user's requests, 8 users at a time.
  for (let i = 0; i < 200; i += 8) await Promise.all(Array.from({ length: 8 }, (_, j) => one(i + j)));
}

/** The resident memory of `pid` and every process under it, in MB. */
function treeRssMb(pid: number): number {
  let kb = 0;
  for (const p of processTree([pid])) {
    try {
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return kb / 1024;
}

interface Start {
  /** ms from spawn to the first answer. */
  answerMs: number;
  /** ms from spawn to check_ready 200 (the bookings can answer). */
  readyMs: number;
  /** Resident MB of the process tree once ready, before any traffic. */
  idleMb: number;
  /** Resident MB of the process tree after the traffic. */
  rssMb: number;
}

/** Starts `spec` pinned, times its start, makes the traffic (unless bare), reads its memory and stops it. */
async function measure(spec: ProcessSpec, gateway: boolean): Promise<Start> {
  const since = performance.now();
  const server = startPinned(spec, SERVER_CPU);
  let exited = false;
  server.child.once('exit', () => (exited = true));
  try {
    const answerMs = await firstAnswer(spec.port, '/v1/messages/1', 200, since, () => exited);
    const readyMs = gateway ? await firstAnswer(spec.port, '/gateway/v0/check_ready', 200, since, () => exited) : NaN;
    // What the start left behind, and then the traffic, once the collections that follow each are done.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));
    await settle();
    const idleMb = treeRssMb(server.child.pid!);
    if (gateway) {
      await traffic(spec.port);
      await settle();
    }
    return { answerMs, readyMs, idleMb, rssMb: gateway ? treeRssMb(server.child.pid!) : idleMb };
  } catch (err) {
    throw new Error(`${spec.name}: ${(err as Error).message}\n${server.stderr()}`);
  } finally {
    // A graceful stop, so that the next start on the folder opens a database closed cleanly, as a restart does.
    if (!exited) {
      const gone = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill('SIGTERM');
      const killer = setTimeout(() => server.child.kill('SIGKILL'), 30_000);
      await gone;
      clearTimeout(killer);
    }
  }
}

async function gatehouse(name: string, config: string, data: string, root = ROOT, workers = 1): Promise<ProcessSpec> {
  const port = await freePort();
  // A baseline build may know no --workers: given only when asked for.
  const start = ['start', '--port', String(port), '--grpc-port', '0', '--no-watch'];
  if (workers > 1) start.push('--workers', String(workers));
  return {
    name,
    command: process.execPath,
    args: [join(root, 'dist', 'cli', 'main.js'), ...start],
    env: { ...process.env, LOG_LEVEL: 'silent', DRAIN_DELAY_MS: '0', GATEHOUSE_DATA: data, GATEHOUSE_CONFIG: config },
    cwd: root,
    port,
  };
}

/** Measures BENCH_ROUNDS rounds, each a bare Koa start, a first start and a later start, in turns. */
export async function runFootprint(
  rounds: number,
  baseline = process.env.BENCH_FOOTPRINT_BASELINE,
): Promise<{ text: string; goals: Goal[] }> {
  ensureBuilt(ROOT);
  const koa: Start[] = [];
  const first: Start[] = [];
  const later: Start[] = [];
  const baseFirst: Start[] = [];
  const baseLater: Start[] = [];
  // Two workers, on a Node that listens with reusePort: what a second worker adds.
  const twoFirst: Start[] = [];
  const twoLater: Start[] = [];
  const withWorkers = supportsReusePort();
  // The demo's, its per-user limit out of reach of the traffic.
  const config = writeGatehouseConfig(mkdtempSync(join(tmpdir(), 'gatehouse-bench-config-')), { kind: 'open' }, 1e9);
  for (let round = 0; round < rounds; round++) {
    const data = mkdtempSync(join(tmpdir(), 'gatehouse-bench-footprint-'));
    const baseData = mkdtempSync(join(tmpdir(), 'gatehouse-bench-footprint-baseline-'));
    const twoData = mkdtempSync(join(tmpdir(), 'gatehouse-bench-footprint-workers-'));
    try {
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
        async () => {
          first.push(await measure(await gatehouse('first start', config, data), true));
          later.push(await measure(await gatehouse('later start', config, data), true));
        },
      ];
      if (withWorkers)
        turns.push(async () => {
          twoFirst.push(await measure(await gatehouse('2 workers, first start', config, twoData, ROOT, 2), true));
          twoLater.push(await measure(await gatehouse('2 workers, later start', config, twoData, ROOT, 2), true));
        });
      if (baseline !== undefined)
        turns.push(async () => {
          baseFirst.push(await measure(await gatehouse('baseline first start', config, baseData, baseline), true));
          baseLater.push(await measure(await gatehouse('baseline later start', config, baseData, baseline), true));
        });
      // A different order each round, so that no one always follows the same other.
      for (let i = 0; i < round % turns.length; i++) turns.push(turns.shift()!);
      for (const turn of turns) await turn();
    } finally {
      rmSync(data, { recursive: true, force: true });
      rmSync(baseData, { recursive: true, force: true });
      rmSync(twoData, { recursive: true, force: true });
    }
  }
  rmSync(config, { recursive: true, force: true });
  const ms = (x: number) => `${Math.round(x)} ms`;
  const mb = (x: number) => `${Math.round(x)} MB`;
  const med = (list: Start[], pick: (s: Start) => number) => median(list.map(pick));
  const ratio = (a: Start[], b: Start[], pick: (s: Start) => number) => median(a.map((s, i) => pick(s) / pick(b[i])));
  const rows = [
    ['', 'first answer', 'bookings ready', 'RSS idle', 'RSS after traffic (max)'],
    ['bare Koa', ms(med(koa, (s) => s.answerMs)), '', mb(med(koa, (s) => s.idleMb)), ''],
    ...(
      [
        ['gatehouse, later start', later],
        ['gatehouse, first start', first],
        ...(withWorkers
          ? [
              ['--workers 2, later start', twoLater],
              ['--workers 2, first start', twoFirst],
            ]
          : []),
        ...(baseline === undefined
          ? []
          : [
              ['baseline, later start', baseLater],
              ['baseline, first start', baseFirst],
            ]),
      ] as [string, Start[]][]
    ).map(([name, l]) => [
      name,
      ms(med(l, (s) => s.answerMs)),
      ms(med(l, (s) => s.readyMs)),
      mb(med(l, (s) => s.idleMb)),
      `${mb(med(l, (s) => s.rssMb))} (${mb(Math.max(...l.map((s) => s.rssMb)))})`,
    ]),
  ];
  if (baseline !== undefined)
    rows.push([
      'baseline later start / bare Koa',
      `${ratio(baseLater, koa, (s) => s.answerMs).toFixed(2)}x`,
      '',
      '',
      '',
    ]);
  if (withWorkers)
    rows.push(
      [
        '--workers 2 / 1, later start',
        `${ratio(twoLater, later, (s) => s.answerMs).toFixed(2)}x`,
        `${ratio(twoLater, later, (s) => s.readyMs).toFixed(2)}x`,
        `+${mb(med(twoLater, (s) => s.idleMb) - med(later, (s) => s.idleMb))}`,
        `+${mb(med(twoLater, (s) => s.rssMb) - med(later, (s) => s.rssMb))}`,
      ],
      ['--workers 2 later start / bare Koa', `${ratio(twoLater, koa, (s) => s.answerMs).toFixed(2)}x`, '', '', ''],
    );
  const startRatio = ratio(later, koa, (s) => s.answerMs);
  const firstRatio = ratio(first, later, (s) => s.readyMs);
  const firstAnswerRatio = ratio(first, later, (s) => s.answerMs);
  const rss = Math.max(...first.map((s) => s.rssMb), ...later.map((s) => s.rssMb));
  const goals: Goal[] = [
    {
      title: `resident memory after traffic <= ${GOALS.rssMb} MB, first and later starts`,
      detail: `largest of ${rounds * 2} starts ${mb(rss)}`,
      met: rss <= GOALS.rssMb,
    },
    {
      title: `a later start answers within ${GOALS.startVsKoa}x a bare Koa app's start`,
      detail: `${startRatio.toFixed(2)}x (median of same-round ratios)`,
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
