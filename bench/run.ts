/**
 * @module bench/run
 * `npm run bench`: Gatehouse against what a user would deploy instead, on
 * the same CPU in the same run (the method is in bench/README.md), then the
 * gRPC rate-limit rows and the bursts through Redis, Gatehouse over HTTP/2
 * against itself over HTTP/1.1, and what tracing costs. Prints the tables,
 * the ratios and the goals, writes the figures to a results file in
 * bench/results/ (BENCH_RESULTS names another folder) and prints how they
 * compare with the newest file there before.
 *
 *   npm run bench                 every part
 *   npm run bench -- http         the HTTP deployments only
 *   npm run bench -- ratelimit    the gRPC rate-limit rows and bursts only
 *   npm run bench -- http2        HTTP/2 (h2c, h2load) against HTTP/1.1 (wrk)
 *   npm run bench -- grpc         a gRPC unary call through the gateway against the upstream's own CPU (bench/grpc-upstream.ts)
 *   npm run bench -- tracing      what tracing costs a request (bench/tracing.ts)
 *   npm run bench -- footprint    memory and start time against a bare Koa app (bench/footprint.ts)
 *   npm run bench -- workers      --workers 2 against --workers 1, wrk beside them (bench/workers.ts; Node 22.12+)
 *
 * Options are environment variables (bench/harness/settings.ts): BENCH_ROUNDS,
 * BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_ROWS,
 * BENCH_ACCESS_LOG, BENCH_LIMIT, BENCH_BASELINE. Exits 1 when a goal is not met, 2 when the
 * benchmark cannot run (a tool missing, a deployment answering wrong).
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { join, relative } from 'node:path';
import { ensureBuilt } from './harness/build';
import { LOAD_CPU, runHttpBench, SERVER_CPU } from './harness/measure';
import { requireTools } from './harness/processes';
import { formatGoals, httpGoals, httpTables, type Goal } from './harness/report';
import {
  burstRows,
  checkedOut,
  compareResults,
  grpcRows as grpcResultRows,
  httpRows,
  latestResult,
  RESULT_FORMAT,
  thisMachine,
  writeResult,
  type BenchResult,
  type ResultRow,
} from './harness/results';
import { readSettings, type Settings } from './harness/settings';
import type { Row } from './ratelimit';

const ROOT = join(__dirname, '..');
/** Where each run writes its results file (BENCH_RESULTS overrides it, for a trial run). */
const RESULTS = process.env.BENCH_RESULTS || join(__dirname, 'results');

/** A path as short as it reads: relative to the working directory when it is under it. */
function shown(path: string): string {
  const near = relative(process.cwd(), path);
  return near.startsWith('..') ? path : near;
}

function header(settings: Settings): string {
  return [
    `Gatehouse benchmark — node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start`,
    `Every server process of a deployment on CPU ${SERVER_CPU} (taskset), the load (wrk, one thread, ${settings.connections} connections) on CPU ${LOAD_CPU};`,
    `${settings.rounds} interleaved round(s), each deployment alone (the others SIGSTOPped): ${settings.warmup} s warm-up, ${settings.duration} s at peak, ${settings.duration} s paced at half that peak.`,
    `Access logs (Gatehouse, the Koa stack's pino, nginx, HAProxy) to ${settings.accessLog === '/dev/null' ? '/dev/null' : `a file each in ${settings.accessLog}`}; Gatehouse from dist/, as gatehouse start; limits ${settings.limit} a minute per user.`,
    ...(settings.baseline ? [baselineLine(settings.baseline)] : []),
    '',
  ].join('\n');
}

/** Which build the BENCH_BASELINE rows run. */
function baselineLine(root: string): string {
  const { commit, dirty } = checkedOut(root);
  const which =
    commit === 'unknown'
      ? 'not a git checkout'
      : `at ${commit.slice(0, 7)}${dirty ? ' with changes not committed' : ''}`;
  return `The BENCH_BASELINE rows: Gatehouse from ${root}/dist/, ${which}.`;
}

/** The gRPC rows, from bench/ratelimit.ts run pinned to the server CPU, its load to the load CPU. */
function grpcRows(settings: Settings): Promise<Row[]> {
  const args = [
    '-c',
    String(SERVER_CPU),
    process.execPath,
    '--import',
    'tsx',
    join(__dirname, 'ratelimit.ts'),
    '--json',
  ];
  const env = {
    ...process.env,
    BENCH_LOAD_CPU: String(LOAD_CPU),
    BENCH_DURATION: String(settings.duration),
    BENCH_ROUNDS: String(settings.rounds),
  };
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !last.startsWith('['))
        reject(new Error(`bench/ratelimit.ts --json failed (${code}): ${out.trim()}`));
      else resolve(JSON.parse(last) as Row[]);
    });
  });
}

async function runGrpcPart(settings: Settings): Promise<{ goal: Goal; burstsMet: boolean; rows: ResultRow[] }> {
  console.log(
    '\ngRPC rate limits (bench/ratelimit.ts): gatehouse serve ratelimit from dist/ against an empty grpc-js handler (peers/grpc-empty.js), envoy v3 ShouldRateLimit, each case a process of its own on CPU 0\n' +
      "(the others SIGSTOPped; Redis on CPU 0 too), the load (h2load, 2 connections, 64 streams) on CPU 1; µs CPU/call: the server processes'\n" +
      "CPU time (with Redis's) a call; ratio: the median of the same-round ratios to an empty grpc-js handler.\n",
  );
  requireTools(['taskset', 'redis-server', 'h2load']);
  const { formatRows } = require('./ratelimit') as typeof import('./ratelimit');
  const rows = await grpcRows(settings);
  console.log(formatRows(rows));
  const memory = rows.find((r) => r.case === 'ShouldRateLimit, memory store')!;
  const goal: Goal = {
    title: '3. gRPC ShouldRateLimit >= 0.9x an empty grpc-js handler',
    detail: `memory store ${memory.ratio.toFixed(2)}; Redis store ${rows[2].ratio.toFixed(2)} (target >= ${rows[2].target})`,
    met: memory.ratio >= 0.9,
  };

  console.log(
    "\nBursts through Redis (bench/ratelimit-bursts.ts, unpinned): exact answers, 0 errors, p99 under a burst <= 2x the empty handler's.\n",
  );
  const { burstTargetsMet, formatBurstBench, runBurstBench } =
    require('./ratelimit-bursts') as typeof import('./ratelimit-bursts');
  const bursts = await runBurstBench({
    repeats: Number(process.env.RATELIMIT_BURST_REPEATS || Math.min(5, settings.rounds)),
  });
  const burstsMet = burstTargetsMet(bursts);
  console.log(`${formatBurstBench(bursts)}\n${burstsMet ? 'PASS' : 'FAIL'}: bursts`);
  return { goal, burstsMet, rows: [...grpcResultRows(rows), ...burstRows(bursts)] };
}

/** Tracing off against main, and on at two ratios: the cost goals of tracing. */
async function runTracingPart(settings: Settings): Promise<Goal[]> {
  console.log(
    '\nTracing (bench/tracing.ts): gatehouse start with auth and a rate limit, built from main and from this tree with tracing off,\n' +
      'at ratio 0.01 and 1.0 (spans over OTLP/HTTP to a sink on CPU 1); each alone on CPU 0 (the others SIGSTOPped), wrk on CPU 1;\n' +
      `${settings.tracingWarmup} s warm-up (BENCH_TRACING_WARMUP), ${settings.duration} s at peak; ratios: medians of the same-round ratios to main.\n`,
  );
  requireTools(['taskset', 'wrk']);
  const { formatInProcessRows, formatTracingRows, runInProcessBench, runTracingBench } =
    require('./tracing') as typeof import('./tracing');
  const rows = await runTracingBench(settings, (line) => process.stdout.write(`${line}\n`));
  console.log(formatTracingRows(rows));
  console.log(
    '\nIn process (bench/peers/traced-in-process.js): every build and one client in one process on CPU 0, taking turns in\n' +
      'batches of 1,000 requests; process CPU time a request (client included); added: the median of the differences to\n' +
      "main's batch of the same turn.\n",
  );
  const inProcess = await runInProcessBench(settings.rounds, (line) => process.stdout.write(`${line}\n`));
  console.log(formatInProcessRows(inProcess));
  const [, off, sampled, all] = rows;
  return [
    {
      title: '4. tracing off: within noise of main (req/s >= 0.97x)',
      detail: `${off.ratio.toFixed(3)}x req/s, ${off.cpuRatio.toFixed(3)}x CPU/req`,
      met: off.ratio >= 0.97,
    },
    {
      title: '5. tracing at ratio 0.01: loses at most 5% of req/s',
      detail: `${sampled.vsOff.toFixed(3)}x req/s of tracing off (${sampled.cpuRatio.toFixed(3)}x main's CPU/req)`,
      met: sampled.vsOff >= 0.95,
    },
    {
      title: '6. tracing every request: loses at most 25% of req/s',
      detail: `${all.vsOff.toFixed(3)}x req/s of tracing off (${all.cpuRatio.toFixed(3)}x main's CPU/req)`,
      met: all.vsOff >= 0.75,
    },
  ];
}

async function main(parts: string[]): Promise<number> {
  const known = ['http', 'ratelimit', 'http2', 'grpc', 'tracing', 'footprint', 'workers'];
  const unknown = parts.filter((p) => !known.includes(p));
  if (unknown.length) throw new Error(`unknown part ${unknown.join(', ')}; parts: ${known.join(', ')}`);
  const run = parts.length ? parts : known;
  const settings = readSettings();
  console.log(header(settings));
  const loadAtStart = os.loadavg();
  const previous = latestResult(RESULTS);

  let goals: Goal[] = [];
  const rows: ResultRow[] = [];
  if (run.includes('http')) {
    ensureBuilt(ROOT);
    const measured = await runHttpBench(settings);
    console.log(httpTables(measured));
    goals = httpGoals(measured);
    rows.push(...httpRows(measured));
  }
  if (run.includes('ratelimit')) {
    const grpc = await runGrpcPart(settings);
    goals.push(grpc.goal, {
      title: 'Bursts through Redis: exact answers, 0 errors, p99 under a burst <= 2x the empty handler',
      detail: grpc.burstsMet ? 'every run' : 'a target was missed (the tables above)',
      met: grpc.burstsMet,
    });
    rows.push(...grpc.rows);
  }
  if (run.includes('http2')) {
    ensureBuilt(ROOT);
    console.log(
      '\nHTTP/2 (bench/http2.ts): gatehouse start from dist/, auth + rate limit (the gatehouse row), on CPU 0, loaded in turn in each round\n' +
        `over HTTP/1.1 by wrk (${settings.connections} connections) and over h2c by h2load (the same requests in flight, 10 streams a connection) on CPU 1.\n`,
    );
    const { formatHttp2, http2Goal, http2Rows, runHttp2Bench } = require('./http2') as typeof import('./http2');
    const bench = await runHttp2Bench(settings);
    console.log(formatHttp2(bench));
    goals.push(http2Goal(bench));
    rows.push(...http2Rows(bench));
  }
  if (run.includes('grpc')) {
    ensureBuilt(ROOT);
    console.log(
      `\ngRPC upstream (bench/grpc-upstream.ts): grpc-js answering ShouldRateLimit, straight and through gatehouse start (grpc: true), both on CPU ${SERVER_CPU}, h2load on CPU ${LOAD_CPU}.\n`,
    );
    const { formatGrpcUpstream, grpcUpstreamGoal, grpcUpstreamRows, runGrpcUpstreamBench } =
      require('./grpc-upstream') as typeof import('./grpc-upstream');
    const bench = await runGrpcUpstreamBench(settings);
    console.log(formatGrpcUpstream(bench));
    goals.push(grpcUpstreamGoal(bench));
    rows.push(...grpcUpstreamRows(bench));
  }
  if (run.includes('tracing')) {
    ensureBuilt(ROOT);
    goals.push(...(await runTracingPart(settings)));
  }
  if (run.includes('footprint')) {
    console.log(
      `\nFootprint (bench/footprint.ts): gatehouse start from dist/ with the demo config and PGlite, against a bare Koa app (peers/bare-koa.js), each on CPU ${SERVER_CPU};\n` +
        `${settings.rounds} interleaved round(s), each a bare Koa start, a first start (an empty data folder) and a later one; RSS of the process tree after 200 rounds of traffic.\n`,
    );
    const { runFootprint } = require('./footprint') as typeof import('./footprint');
    const footprint = await runFootprint(settings.rounds);
    console.log(footprint.text);
    goals.push(...footprint.goals);
  }
  if (run.includes('workers')) {
    ensureBuilt(ROOT);
    console.log(
      `\nWorkers (bench/workers.ts): gatehouse start from dist/, auth + rate limit (the gatehouse row), with --workers 1 and --workers 2,\n` +
        `loaded in turn in each round by wrk (${settings.connections} connections), the gateway and wrk sharing every CPU.\n`,
    );
    const { formatWorkers, runWorkersBench, workersGoals, workersRows } =
      require('./workers') as typeof import('./workers');
    const bench = await runWorkersBench(settings);
    console.log(formatWorkers(bench));
    goals.push(...workersGoals(bench));
    rows.push(...workersRows(bench));
  }
  console.log(`\nGoals (same run, pinned):\n${formatGoals(goals)}`);
  const loadAtEnd = os.loadavg();
  console.log(
    `\nload average ${loadAtEnd
      .map((l) => l.toFixed(2))
      .join(' ')} at the end: figures taken on a machine busy with other work are indicative only.`,
  );
  const result: BenchResult = {
    format: RESULT_FORMAT,
    date: new Date().toISOString(),
    ...checkedOut(ROOT),
    machine: thisMachine(),
    loadAverage: { start: loadAtStart, end: loadAtEnd },
    settings,
    parts: run,
    rows,
    goals,
  };
  const file = writeResult(RESULTS, result);
  console.log(`\nResults written to ${shown(file)}.`);
  if (previous) console.log(`\n${compareResults(previous.result, result, shown(previous.file))}`);
  else console.log('No earlier results file to compare with.');
  return goals.every((g) => g.met !== false) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? `bench: ${err.message}` : err);
    process.exitCode = 2;
  },
);
