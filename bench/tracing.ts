/**
 * @module bench/tracing
 * What tracing costs a request: `gatehouse start` with auth and a rate limit
 * (the same job as the first table's Gatehouse row), built from main, and
 * from this tree with tracing off, sampling 1 in 100 new traces and every
 * one, spans sent to a sink on the load CPU. Each is measured alone (the
 * others SIGSTOPped), the server on CPU 0, wrk on CPU 1, in interleaved
 * rounds, each round with processes of its own and the order turned by
 * one; the ratios are medians of the same round's ratios to main.
 *
 *   npm run bench -- tracing     (BENCH_ROUNDS, BENCH_DURATION, BENCH_TRACING_WARMUP, BENCH_CONNECTIONS)
 *   TRACING_BENCH_MAIN=<dir>     a built checkout of main (dist/ and node_modules/); default: main built in a temporary folder
 */
import { execFileSync, execSync } from 'node:child_process';
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/ports';
import { writeGatehouseConfig } from './harness/configs';
import {
  cpuMicros,
  processTree,
  signalAll,
  identify,
  startPinned,
  stopAll,
  waitUntilServing,
  type Pinned,
} from './harness/processes';
import type { Settings } from './harness/settings';
import { median } from './harness/stats';
import { ALICE, MESSAGE_PATH } from './harness/selfcheck';
import { runWrk } from './harness/wrk';

const ROOT = join(__dirname, '..');
const SERVER_CPU = 0;
const LOAD_CPU = 1;

interface Variant {
  readonly name: string;
  /** The checkout whose dist/ runs. */
  readonly root: string;
  readonly env: Record<string, string>;
}

export interface TracingRow {
  readonly name: string;
  readonly reqPerSec: number;
  readonly cpuUs: number;
  /** Median of the same-round ratios of req/s to main. */
  readonly ratio: number;
  /** Median of the same-round ratios of CPU µs per request to main. */
  readonly cpuRatio: number;
  /** Median of the same-round ratios of req/s to this tree with tracing off. */
  readonly vsOff: number;
}

/** main's dist/, built in a temporary folder from `git archive main`, with this tree's node_modules. */
function buildMain(): string {
  const given = process.env.TRACING_BENCH_MAIN;
  if (given) return given;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-main-'));
  execSync(`git -C ${ROOT} archive main | tar -x -C ${dir}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  execSync('node_modules/.bin/tsc -p tsconfig.build.json', { cwd: dir, stdio: ['ignore', 2, 2] });
  if (!existsSync(join(dir, 'dist', 'cli', 'main.js'))) throw new Error('main did not build');
  return dir;
}

async function start(variant: Variant, config: string, data: string): Promise<{ pinned: Pinned; port: number }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...variant.env };
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_') && !(name in variant.env)) delete env[name];
  const pinned = startPinned(
    {
      name: variant.name,
      command: process.execPath,
      args: [
        join(variant.root, 'dist', 'cli', 'main.js'),
        'start',
        '--config',
        config,
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--grpc-port',
        '0',
        '--data',
        data,
      ],
      env,
      port,
    },
    SERVER_CPU,
  );
  await waitUntilServing(pinned);
  return { pinned, port };
}

/** The OTLP sink, on the load CPU: what the collector costs is not the gateway's. */
function startSink(port: number): Pinned {
  return startPinned(
    {
      name: 'otlp sink',
      command: process.execPath,
      args: [join(__dirname, 'peers', 'otlp-sink.js')],
      env: { ...process.env, PORT: String(port) },
      port,
    },
    LOAD_CPU,
  );
}

/** Measures every variant, `settings.rounds` interleaved rounds. */
export async function runTracingBench(settings: Settings, log: (line: string) => void): Promise<TracingRow[]> {
  const main = buildMain();
  const sinkPort = await freePort();
  const sink = startSink(sinkPort);
  const traced = (ratio: string) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: ratio,
  });
  const variants: Variant[] = [
    { name: 'main', root: main, env: {} },
    { name: 'tracing off', root: ROOT, env: {} },
    { name: 'tracing on, ratio 0.01', root: ROOT, env: traced('0.01') },
    { name: 'tracing on, ratio 1.0', root: ROOT, env: traced('1.0') },
  ];
  const config = writeGatehouseConfig(
    join(mkdtempSync(join(tmpdir(), 'gatehouse-tracing-bench-')), 'config'),
    { kind: 'auth-limit' },
    settings.limit,
  );
  const samples = variants.map(() => [] as { rps: number; cpu: number }[]);
  let running: { pinned: Pinned; port: number }[] = [];
  try {
    await waitUntilServing(sink);
    for (let round = 0; round < settings.rounds; round++) {
      // Started afresh each round: what one process happens to compile weighs on one round, not on all of a build's.
      // A data folder each: one process a folder.
      running = [];
      for (const [i, variant] of variants.entries()) running.push(await start(variant, config, `${config}-data-${i}`));
      const tree = (i: number) => identify(processTree([running[i].pinned.child.pid!]));
      for (let turn = 0; turn < variants.length; turn++) {
        // The order turns with the round: no build is always the first measured after the starts.
        const i = (turn + round) % variants.length;
        running.forEach((_, j) => signalAll(tree(j), j === i ? 'SIGCONT' : 'SIGSTOP'));
        const load = {
          url: `http://127.0.0.1:${running[i].port}${MESSAGE_PATH}`,
          connections: settings.connections,
          cpu: LOAD_CPU,
          authorization: ALICE,
        };
        await runWrk({ ...load, seconds: settings.tracingWarmup });
        const pids = processTree([running[i].pinned.child.pid!]);
        const before = cpuMicros(pids);
        const peak = await runWrk({ ...load, seconds: settings.duration });
        const cpu = (cpuMicros(pids) - before) / peak.requests;
        if (peak.statusErrors > 0) throw new Error(`${variants[i].name}: ${peak.statusErrors} answers of 400 or more`);
        samples[i][round] = { rps: peak.reqPerSec, cpu };
        log(
          `  round ${round + 1}/${settings.rounds} ${variants[i].name}: ${Math.round(peak.reqPerSec)} req/s, ${cpu.toFixed(1)} µs CPU/req`,
        );
      }
      running.forEach((r) => signalAll(identify(processTree([r.pinned.child.pid!])), 'SIGCONT'));
      await stopAll(running.map((r) => r.pinned));
    }
  } finally {
    running.forEach((r) => signalAll(identify(processTree([r.pinned.child.pid!])), 'SIGCONT'));
    await stopAll([...running.map((r) => r.pinned), sink]);
  }
  return variants.map((variant, i) => ({
    name: variant.name,
    reqPerSec: median(samples[i].map((s) => s.rps)),
    cpuUs: median(samples[i].map((s) => s.cpu)),
    ratio: median(samples[i].map((s, round) => s.rps / samples[0][round].rps)),
    cpuRatio: median(samples[i].map((s, round) => s.cpu / samples[0][round].cpu)),
    vsOff: median(samples[i].map((s, round) => s.rps / samples[1][round].rps)),
  }));
}

/** The rows as a table, and the goals of tracing's cost. */
export function formatTracingRows(rows: readonly TracingRow[]): string {
  const lines = [
    '| build | req/s | µs CPU/req | req/s vs main | CPU/req vs main | req/s vs tracing off |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.name} | ${Math.round(r.reqPerSec)} | ${r.cpuUs.toFixed(1)} | ${r.ratio.toFixed(3)} | ${r.cpuRatio.toFixed(3)} | ${r.vsOff.toFixed(3)} |`,
    );
  return lines.join('\n');
}

/** One row of the in-process half: CPU µs a request, client included. */
export interface InProcessRow {
  readonly name: string;
  readonly cpuUs: number;
  /** Median of the differences to main's batch of the same turn, in µs. */
  readonly addedUs: number;
}

/**
 * The same builds, all in one process pinned to CPU 0 with one client
 * (bench/peers/traced-in-process.js), taking turns in batches of 1,000
 * requests, `rounds` × 8 turns: what else the machine does weighs on every
 * build alike, and each batch is compared with main's of the same turn.
 */
export async function runInProcessBench(rounds: number, log: (line: string) => void): Promise<InProcessRow[]> {
  const main = buildMain();
  const sinkPort = await freePort();
  const sink = startSink(sinkPort);
  await waitUntilServing(sink);
  const config = writeGatehouseConfig(
    join(mkdtempSync(join(tmpdir(), 'gatehouse-tracing-bench-')), 'config'),
    { kind: 'auth-limit' },
    1_000_000_000,
  );
  const variants: [string, string][] = [
    ['main', `${main}=off`],
    ['tracing off', `${ROOT}=off`],
    ['tracing on, ratio 0.01', `${ROOT}=0.01`],
    ['tracing on, ratio 1.0', `${ROOT}=1`],
  ];
  let out: string;
  try {
    log(`  in process: ${variants.length} builds taking turns, ${rounds * 8} turns`);
    out = execFileSync(
      'taskset',
      [
        '-c',
        String(SERVER_CPU),
        process.execPath,
        join(__dirname, 'peers', 'traced-in-process.js'),
        config,
        `http://127.0.0.1:${sinkPort}`,
        ...variants.map(([, build]) => build),
      ],
      { encoding: 'utf8', env: { ...process.env, BATCHES: String(rounds * 8) } },
    );
  } finally {
    await stopAll([sink]);
  }
  const { cpuUsPerReq, addedUs } = JSON.parse(out.trim().split('\n').pop()!) as {
    cpuUsPerReq: number[];
    addedUs: number[];
  };
  return variants.map(([name], i) => ({ name, cpuUs: cpuUsPerReq[i], addedUs: addedUs[i] }));
}

/** The in-process rows as a table. */
export function formatInProcessRows(rows: readonly InProcessRow[]): string {
  const lines = ['| build | µs CPU/req (client included) | added to main, µs |', '|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.name} | ${r.cpuUs.toFixed(1)} | ${r.addedUs.toFixed(1)} |`);
  return lines.join('\n');
}
