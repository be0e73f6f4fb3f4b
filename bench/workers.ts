/**
 * @module bench/workers
 * `npm run bench -- workers`: one Gatehouse (`gatehouse start` from dist/,
 * the demo config with auth and a per-user rate limit in front of the
 * in-process api, as the `gatehouse` row) with `--workers 1` and with
 * `--workers 2`, loaded by wrk over HTTP/1.1, turn about in each round.
 * Here, unlike the other parts, the gateway and wrk share both CPUs, as
 * they would on a machine whose every core serves: the question is what a
 * second worker adds when there is a second core to run it. Its goals:
 *
 * - 2 workers answer at least 1.3x the requests a second of 1;
 * - the CPU a request costs (the process's CPU time, every thread, read from
 *   /proc, over the requests answered) with 2 workers is within 10% of 1's:
 *   the shared counters and bookings cost no round trip a request.
 *
 * Both as the median of the ratios of the same rounds. Workers need Node
 * 22.12 or later: on another the part says so and measures nothing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { supportsReusePort } from '../src/ports';
import { DEPLOYMENTS } from './harness/deployments';
import { cpuMicros, processTree, requireTools, startPinned, stopAll, waitUntilServing } from './harness/processes';
import type { Goal } from './harness/report';
import type { ResultRow } from './harness/results';
import { ALICE, MESSAGE_PATH } from './harness/selfcheck';
import type { Settings } from './harness/settings';
import { median } from './harness/stats';
import { runWrk } from './harness/wrk';

/** Every CPU of the machine: the gateway's workers and wrk alike. */
const ALL_CPUS = `0-${os.cpus().length - 1}`;

/** The goals, as docs/operations.md#workers states them. */
export const WORKER_GOALS = { scaling: 1.3, cpuWithin: 0.1 };

interface Turn {
  reqPerSec: number;
  cpuUs: number;
  p99Ms: number;
}

export interface WorkersBench {
  one: Turn[];
  two: Turn[];
  /** Resident MB of each after the rounds. */
  rssMb: { one: number; two: number };
}

function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

/** Starts both gateways, then measures them in turn; undefined on a Node without reusePort. */
export async function runWorkersBench(settings: Settings): Promise<WorkersBench | undefined> {
  if (!supportsReusePort()) return undefined;
  requireTools(['taskset', 'wrk']);
  const spec = DEPLOYMENTS.find((d) => d.key === 'gatehouse')!;
  const dirs: string[] = [];
  const started = [];
  try {
    const gateways: { port: number; pid: number }[] = [];
    for (const workers of [1, 2]) {
      const dir = mkdtempSync(join(os.tmpdir(), `gatehouse-bench-workers-${workers}-`));
      dirs.push(dir);
      const built = await spec.build({ dir, logOf: () => '/dev/null', upstreamPort: 0 }, settings.limit);
      const [gatehouse] = built.processes;
      const pinned = startPinned(
        {
          ...gatehouse,
          args: [...gatehouse.args, '--workers', String(workers)],
          env: { ...gatehouse.env, GATEHOUSE_DATA: join(dir, 'data') },
        },
        ALL_CPUS,
      );
      started.push(pinned);
      await waitUntilServing(pinned);
      gateways.push({ port: built.port, pid: pinned.child.pid! });
    }
    const measure = async (gateway: { port: number; pid: number }): Promise<Turn> => {
      const url = `http://127.0.0.1:${gateway.port}${MESSAGE_PATH}`;
      const load = (seconds: number) =>
        runWrk({ url, seconds, connections: settings.connections, cpu: ALL_CPUS, authorization: ALICE });
      await load(settings.warmup);
      const tree = processTree([gateway.pid]);
      const before = cpuMicros(tree);
      const peak = await load(settings.duration);
      const cpu = cpuMicros(tree) - before;
      if (peak.statusErrors > 0) throw new Error(`${peak.statusErrors} answers of status 400 or more`);
      if (peak.requests === 0) throw new Error(`no request answered in ${settings.duration} s`);
      return { reqPerSec: peak.reqPerSec, cpuUs: cpu / peak.requests, p99Ms: peak.p99Ms };
    };
    const result: WorkersBench = { one: [], two: [], rssMb: { one: 0, two: 0 } };
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
      for (const which of order) {
        const turn = await measure(gateways[which]);
        (which === 0 ? result.one : result.two).push(turn);
        process.stderr.write(
          `  round ${round + 1}/${settings.rounds} ${which + 1} worker(s): ${Math.round(turn.reqPerSec)} req/s, ${turn.cpuUs.toFixed(1)} µs CPU/req; load average ${os.loadavg()[0].toFixed(1)}\n`,
        );
      }
    }
    result.rssMb = { one: rssMb(gateways[0].pid), two: rssMb(gateways[1].pid) };
    return result;
  } finally {
    await stopAll(started);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** The medians of the same-round ratios of 2 workers to 1: in requests a second, and in CPU a request. */
export function workersRatios(bench: WorkersBench): { reqPerSec: number; cpu: number } {
  const rounds = bench.one.map((_, i) => i);
  return {
    reqPerSec: median(rounds.map((i) => bench.two[i].reqPerSec / bench.one[i].reqPerSec)),
    cpu: median(rounds.map((i) => bench.two[i].cpuUs / bench.one[i].cpuUs)),
  };
}

export function formatWorkers(bench: WorkersBench | undefined): string {
  if (bench === undefined)
    return `Workers: not measured, Node ${process.versions.node} has no reusePort (22.12 or later has).`;
  const row = (name: string, turns: Turn[], mb: number) =>
    `| ${name} | ${Math.round(median(turns.map((t) => t.reqPerSec)))} | ${median(turns.map((t) => t.cpuUs)).toFixed(1)} | ${median(turns.map((t) => t.p99Ms)).toFixed(1)} | ${Math.round(mb)} |`;
  const ratios = workersRatios(bench);
  return [
    `| gatehouse start (wrk beside it on CPUs ${ALL_CPUS}) | req/s | µs CPU/req | p99 ms | RSS MB |`,
    '|---|---|---|---|---|',
    row('--workers 1', bench.one, bench.rssMb.one),
    row('--workers 2', bench.two, bench.rssMb.two),
    '',
    `2 workers ÷ 1, median of the same-round ratios: ${ratios.reqPerSec.toFixed(2)} in req/s, ${ratios.cpu.toFixed(2)} in CPU a request.`,
  ].join('\n');
}

export function workersRows(bench: WorkersBench | undefined): ResultRow[] {
  if (bench === undefined) return [];
  const ratios = workersRatios(bench);
  const rounded = (x: number) => Math.round(x * 1000) / 1000;
  const row = (name: string, turns: Turn[], mb: number, figures: Record<string, number> = {}): ResultRow => ({
    table: 'workers',
    row: name,
    figures: {
      'req/s': Math.round(median(turns.map((t) => t.reqPerSec))),
      'CPU µs/req': Math.round(median(turns.map((t) => t.cpuUs)) * 10) / 10,
      'p99 ms': Math.round(median(turns.map((t) => t.p99Ms)) * 100) / 100,
      'RSS MB': Math.round(mb),
      ...figures,
    },
    rounds: turns.map((t) => ({ ...t })),
  });
  return [
    row('--workers 1', bench.one, bench.rssMb.one),
    row('--workers 2', bench.two, bench.rssMb.two, {
      'vs 1 worker': rounded(ratios.reqPerSec),
      'CPU/req vs 1 worker': rounded(ratios.cpu),
    }),
  ];
}

export function workersGoals(bench: WorkersBench | undefined): Goal[] {
  if (bench === undefined) return [];
  const ratios = workersRatios(bench);
  return [
    {
      title: `8. --workers 2 >= ${WORKER_GOALS.scaling}x the req/s of --workers 1, wrk beside them`,
      detail: ratios.reqPerSec.toFixed(2),
      met: ratios.reqPerSec >= WORKER_GOALS.scaling,
    },
    {
      title: `9. CPU a request with 2 workers within ${WORKER_GOALS.cpuWithin * 100}% of 1 worker's`,
      detail: `${ratios.cpu.toFixed(2)}x`,
      met: ratios.cpu <= 1 + WORKER_GOALS.cpuWithin,
    },
  ];
}
