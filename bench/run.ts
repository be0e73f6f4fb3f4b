/**
 * @module bench/run
 * `npm run bench`: Gatehouse against what a user would deploy instead, on
 * the same CPU in the same run (the method is in bench/README.md), then the
 * gRPC rate-limit rows and the bursts through Redis, then Gatehouse over
 * HTTP/2 against itself over HTTP/1.1. Prints the tables, the ratios and
 * the goals.
 *
 *   npm run bench                 every part
 *   npm run bench -- http         the HTTP deployments only
 *   npm run bench -- ratelimit    the gRPC rate-limit rows and bursts only
 *   npm run bench -- http2        HTTP/2 (h2c, h2load) against HTTP/1.1 (wrk)
 *
 * Options are environment variables (bench/harness/settings.ts): BENCH_ROUNDS,
 * BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_ROWS,
 * BENCH_ACCESS_LOG, BENCH_LIMIT. Exits 1 when a goal is not met, 2 when the
 * benchmark cannot run (a tool missing, a deployment answering wrong).
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from './harness/build';
import { LOAD_CPU, runHttpBench, SERVER_CPU } from './harness/measure';
import { requireTools } from './harness/processes';
import { formatGoals, httpGoals, httpTables, type Goal } from './harness/report';
import { readSettings, type Settings } from './harness/settings';
import type { Row } from './ratelimit';

const ROOT = join(__dirname, '..');

function header(settings: Settings): string {
  return [
    `Gatehouse benchmark — node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start`,
    `Every server process of a deployment on CPU ${SERVER_CPU} (taskset), the load (wrk, one thread, ${settings.connections} connections) on CPU ${LOAD_CPU};`,
    `${settings.rounds} interleaved round(s), each deployment alone (the others SIGSTOPped): ${settings.warmup} s warm-up, ${settings.duration} s at peak, ${settings.duration} s paced at half that peak.`,
    `Access logs (Gatehouse, the Koa stack's pino, nginx, HAProxy) to ${settings.accessLog === '/dev/null' ? '/dev/null' : `a file each in ${settings.accessLog}`}; Gatehouse from dist/, as gatehouse start; limits ${settings.limit} a minute per user.`,
    '',
  ].join('\n');
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

async function runGrpcPart(settings: Settings): Promise<{ goal: Goal; burstsMet: boolean }> {
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
  return { goal, burstsMet };
}

async function main(parts: string[]): Promise<number> {
  const known = ['http', 'ratelimit', 'http2'];
  const unknown = parts.filter((p) => !known.includes(p));
  if (unknown.length) throw new Error(`unknown part ${unknown.join(', ')}; parts: ${known.join(', ')}`);
  const run = parts.length ? parts : known;
  const settings = readSettings();
  console.log(header(settings));

  let goals: Goal[] = [];
  let burstsMet = true;
  if (run.includes('http')) {
    ensureBuilt(ROOT);
    const measured = await runHttpBench(settings);
    console.log(httpTables(measured));
    goals = httpGoals(measured);
  }
  if (run.includes('ratelimit')) {
    const grpc = await runGrpcPart(settings);
    goals.push(grpc.goal);
    burstsMet = grpc.burstsMet;
  }
  if (run.includes('http2')) {
    ensureBuilt(ROOT);
    console.log(
      '\nHTTP/2 (bench/http2.ts): gatehouse start from dist/, auth + rate limit (the gatehouse row), on CPU 0, loaded in turn in each round\n' +
        `over HTTP/1.1 by wrk (${settings.connections} connections) and over h2c by h2load (the same requests in flight, 10 streams a connection) on CPU 1.\n`,
    );
    const { formatHttp2, http2Goal, runHttp2Bench } = require('./http2') as typeof import('./http2');
    const bench = await runHttp2Bench(settings);
    console.log(formatHttp2(bench));
    goals.push(http2Goal(bench));
  }
  console.log(`\nGoals (same run, pinned):\n${formatGoals(goals)}`);
  console.log(
    `\nload average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the end: figures taken on a machine busy with other work are indicative only.`,
  );
  return goals.every((g) => g.met !== false) && burstsMet ? 0 : 1;
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
