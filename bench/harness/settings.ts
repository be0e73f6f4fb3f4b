/**
 * @module bench/harness/settings
 * The options of `npm run bench`, from the environment, checked at start.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEPLOYMENTS } from './deployments';

function envInteger(name: string, fallback: number, min = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be a whole number of at least ${min}, got '${raw}'`);
  return n;
}

export interface Settings {
  /** Interleaved rounds (BENCH_ROUNDS, default 7). */
  rounds: number;
  /** Seconds of each measured run, at peak and at half of it (BENCH_DURATION, default 5). */
  duration: number;
  /** Seconds of load before each peak run (BENCH_WARMUP, default 2). */
  warmup: number;
  /**
   * Seconds of load before each peak run of the tracing rows
   * (BENCH_TRACING_WARMUP, default 20): at a ratio of 0.01 the sampled
   * path runs for one request in a hundred, and V8 compiles it only after
   * it has run a few thousand times, which 2 s of load do not give it.
   */
  tracingWarmup: number;
  /** wrk's connections (BENCH_CONNECTIONS, default 50). */
  connections: number;
  /** Where the deployments' access logs go (BENCH_ACCESS_LOG): /dev/null (the default), or a folder, a file each, kept. */
  accessLog: string;
  /** Requests a minute each user may make while measured (BENCH_LIMIT): more than any run sends. */
  limit: number;
  /** The deployments measured, by key (BENCH_ROWS, separated by commas), with the baseline of each table they are in. */
  rows: readonly string[];
  /**
   * Another build of Gatehouse (BENCH_BASELINE: a checkout with its dist/
   * built), whose rows run in the same rounds as this tree's: "Gatehouse vs
   * it" on them is this build against that one. None by default.
   */
  baseline: string | undefined;
}

/** The baseline of each table, measured with any row of its table. */
const BASELINES: Record<string, string> = { 'same-job': 'bare-koa', proxy: 'upstream' };

function baselinesOf(rows: readonly string[]): string[] {
  return [...new Set(DEPLOYMENTS.filter((d) => rows.includes(d.key)).map((d) => BASELINES[d.group]))];
}

/** BENCH_BASELINE, checked: a folder with a built Gatehouse in it. */
function readBaseline(): string | undefined {
  const raw = process.env.BENCH_BASELINE;
  if (raw === undefined || raw === '') return undefined;
  const root = resolve(raw);
  if (!existsSync(join(root, 'dist', 'cli', 'main.js')))
    throw new Error(
      `BENCH_BASELINE: ${root} has no dist/cli/main.js; give a Gatehouse checkout, built (npm ci && npm run build)`,
    );
  return root;
}

export function readSettings(): Settings {
  const accessLog = resolve(process.env.BENCH_ACCESS_LOG || '/dev/null');
  const baseline = readBaseline();
  const keys = DEPLOYMENTS.filter((d) => baseline !== undefined || !d.baseline).map((d) => d.key);
  const asked = (process.env.BENCH_ROWS ?? '')
    .split(/[,|]/)
    .map((r) => r.trim())
    .filter(Boolean);
  const unknown = asked.filter((r) => !keys.includes(r));
  if (unknown.length)
    throw new Error(
      `BENCH_ROWS: unknown row ${unknown.join(', ')}; rows: ${keys.join(', ')}${baseline ? '' : ' (and with BENCH_BASELINE, its rows)'}`,
    );
  return {
    rounds: envInteger('BENCH_ROUNDS', 7),
    duration: envInteger('BENCH_DURATION', 5),
    warmup: envInteger('BENCH_WARMUP', 2),
    tracingWarmup: envInteger('BENCH_TRACING_WARMUP', 20),
    connections: envInteger('BENCH_CONNECTIONS', 50),
    accessLog,
    limit: envInteger('BENCH_LIMIT', 1_000_000_000),
    rows: asked.length ? keys.filter((k) => asked.includes(k) || baselinesOf(asked).includes(k)) : keys,
    baseline,
  };
}
