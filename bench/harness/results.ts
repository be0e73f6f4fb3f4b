/**
 * @module bench/harness/results
 * The results file each `npm run bench` writes under bench/results/: the
 * machine, the date, the commit, the settings and the figures of every row,
 * and the comparison of a run with the one before it (the same rows, the
 * ratio new ÷ old of each figure).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { BurstBench } from '../ratelimit-bursts';
import type { Row as GrpcRow } from '../ratelimit';
import { comparedWithGatehouse } from './deployments';
import type { Measured, Sample } from './measure';
import { sameRoundRatio, table, type Goal } from './report';
import type { Settings } from './settings';
import { median } from './stats';

/** The version of the file's shape; a reader refuses another. */
export const RESULT_FORMAT = 1 as const;

/** Where the run was made. A field not known (a run converted from notes) is null. */
export interface Machine {
  /** `os.cpus()[0].model`. */
  cpu: string | null;
  /** Logical CPUs the system has. */
  cores: number | null;
  /** `process.version`. */
  node: string | null;
  /** `os.release()`. */
  kernel: string | null;
}

/** One row of one table, its figures named as the printed table's columns. */
export interface ResultRow {
  /** `same-job`, `proxy`, `grpc` or `bursts`. */
  table: string;
  /** The row's key (`BENCH_ROWS`), or the gRPC case. */
  row: string;
  /** Medians over the rounds, and same-round ratios: `req/s`, `CPU µs/req`, `p99 ms half`, `vs baseline`... */
  figures: Record<string, number>;
  /** Each round's sample, in order, when kept. */
  rounds?: Record<string, number>[];
}

/** A results file. */
export interface BenchResult {
  format: typeof RESULT_FORMAT;
  /** When the run ended, ISO 8601. */
  date: string;
  /** The commit measured; `dirty` when the tree had changes not committed. */
  commit: string;
  dirty: boolean;
  machine: Machine;
  /** The load average at the start and the end: a busy machine makes figures indicative only. */
  loadAverage: { start: number[]; end: number[] };
  /** The run's settings, or null where not known. */
  settings: Partial<Settings> | null;
  /** The parts run: `http`, `ratelimit`. */
  parts: string[];
  rows: ResultRow[];
  goals: Goal[];
  /** Said of a file not written by the benchmark itself. */
  note?: string;
}

/** The machine this process runs on. */
export function thisMachine(): Machine {
  const cpus = os.cpus();
  return { cpu: cpus[0]?.model.trim() ?? null, cores: cpus.length, node: process.version, kernel: os.release() };
}

/** The commit checked out in `root`, and whether the tree differs from it (results files aside). */
export function checkedOut(root: string): { commit: string; dirty: boolean } {
  // A folder that is no checkout makes git say so on its standard error: the answer below says it instead.
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    const commit = git('rev-parse', 'HEAD');
    const dirty = git('status', '--porcelain', '--', '.', ':!bench/results') !== '';
    return { commit, dirty };
  } catch {
    return { commit: 'unknown', dirty: true };
  }
}

const rounded = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The rows of the HTTP tables, as the tables print them, with each round's sample. */
export function httpRows(measured: readonly Measured[]): ResultRow[] {
  const byKey = (key: string) => measured.find((m) => m.spec.key === key);
  const of = (m: Measured, pick: (s: Sample) => number) => median(m.samples.map(pick));
  return measured.map((m) => {
    const proxy = m.spec.group === 'proxy';
    const baseline = byKey(proxy ? 'upstream' : 'bare-koa');
    const gatehouse = byKey(proxy ? 'gatehouse-proxy' : 'gatehouse');
    const figures: Record<string, number> = {
      'req/s': Math.round(of(m, (s) => s.reqPerSec)),
      'CPU µs/req': rounded(
        of(m, (s) => s.cpuUs),
        1,
      ),
      'p99 ms peak': rounded(
        of(m, (s) => s.p99PeakMs),
        2,
      ),
      'p99 ms half': rounded(
        of(m, (s) => s.p99HalfMs),
        2,
      ),
      errors: m.samples.reduce((n, s) => n + s.socketErrors, 0),
    };
    if (proxy && m.spec.proxied)
      figures['proxy alone CPU µs/req'] = rounded(
        of(m, (s) => s.ownCpuUs),
        1,
      );
    if (baseline && baseline !== m)
      figures['vs baseline'] = rounded(
        sameRoundRatio(m, baseline, (s) => s.reqPerSec),
        3,
      );
    if (gatehouse && gatehouse !== m && comparedWithGatehouse(m.spec))
      figures['Gatehouse vs it'] = rounded(
        sameRoundRatio(gatehouse, m, (s) => s.reqPerSec),
        3,
      );
    return { table: m.spec.group, row: m.spec.key, figures, rounds: m.samples.map((s) => ({ ...s })) };
  });
}

/** The gRPC rows of bench/ratelimit.ts. */
export function grpcRows(rows: readonly GrpcRow[]): ResultRow[] {
  return rows.map((r) => ({
    table: 'grpc',
    row: r.case,
    figures: { 'req/s': r.reqPerSec, 'p99 ms': r.p99Ms, 'CPU µs/call': r.cpuUs, 'vs empty handler': r.ratio },
  }));
}

/** The latency rows of the bursts through Redis (their exactness is a goal). */
export function burstRows(bursts: BurstBench): ResultRow[] {
  return bursts.latency.map((r) => ({
    table: 'bursts',
    row: r.case,
    figures: { 'p50 ms': r.p50Ms, 'p99 ms': r.p99Ms, errors: r.errors, 'p99 vs empty': r.ratio },
  }));
}

/** The file name of a result: its date and commit, so that names sort as runs were made. */
export function resultFileName(result: BenchResult): string {
  return `${result.date.replace(/[:.]/g, '-')}-${result.commit.slice(0, 7)}.json`;
}

/** Writes `result` into `dir`; returns the file's path. */
export function writeResult(dir: string, result: BenchResult): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, resultFileName(result));
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/** Reads a results file, refusing one of another format. */
export function readResult(file: string): BenchResult {
  const result = JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown };
  if (result.format !== RESULT_FORMAT)
    throw new Error(`${file}: results format ${String(result.format)}, this benchmark reads ${String(RESULT_FORMAT)}`);
  return result as BenchResult;
}

/** The name {@link resultFileName} gives: the date with `-` for `:` and `.`, then the commit's first 7 digits. */
const RESULT_FILE_NAME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z-[0-9a-z]{7}\.json$/;

/** The newest results file of `dir` (by its date), with its path; undefined when there is none. */
export function latestResult(dir: string): { file: string; result: BenchResult } | undefined {
  let names: string[];
  try {
    // Only the files the benchmark names itself: the folder holds other figures too (bench/hardening's).
    names = readdirSync(dir).filter((name) => RESULT_FILE_NAME.test(name));
  } catch {
    return undefined;
  }
  return names
    .map((name) => ({ file: join(dir, name), result: readResult(join(dir, name)) }))
    .sort((a, b) => a.result.date.localeCompare(b.result.date))
    .at(-1);
}

function describeMachine(m: Machine): string {
  const known = (x: string | number | null) => (x === null ? 'not recorded' : String(x));
  return `${known(m.cpu)}, ${known(m.cores)} CPUs, node ${known(m.node)}, kernel ${known(m.kernel)}`;
}

/**
 * The rows `current` shares with `previous`, each figure both have as the
 * ratio new ÷ old, by table; the machines named when they differ.
 */
export function compareResults(previous: BenchResult, current: BenchResult, previousName: string): string {
  const lines = [
    `Against the previous result, ${previousName} (${previous.date.slice(0, 10)}, commit ${previous.commit.slice(0, 7)}): new ÷ old of each figure of the rows both have.`,
  ];
  const same = describeMachine(previous.machine) === describeMachine(current.machine);
  if (!same) {
    lines.push(
      `Another machine: then ${describeMachine(previous.machine)}; now ${describeMachine(current.machine)}.`,
      'The ratios compare the machines as much as the code; the same-round ratios (vs ...) compare best.',
    );
  }
  const tables = [...new Set(current.rows.map((r) => r.table))];
  let shared = 0;
  for (const name of tables) {
    const pairs = current.rows
      .filter((r) => r.table === name)
      .map((now) => ({ now, then: previous.rows.find((r) => r.table === name && r.row === now.row) }))
      .filter((p): p is { now: ResultRow; then: ResultRow } => p.then !== undefined);
    if (!pairs.length) continue;
    shared += pairs.length;
    const figures = [...new Set(pairs.flatMap((p) => Object.keys(p.now.figures)))].filter((f) =>
      pairs.some((p) => p.then.figures[f] !== undefined),
    );
    const cells = [[name, ...figures]];
    for (const { now, then } of pairs) {
      cells.push([
        now.row,
        ...figures.map((f) => {
          const a = then.figures[f];
          const b = now.figures[f];
          if (a === undefined || b === undefined) return '';
          if (a === 0) return b === 0 ? '=' : `${a} → ${b}`;
          return (b / a).toFixed(2);
        }),
      ]);
    }
    lines.push('', table(cells));
  }
  if (!shared) lines.push('', 'No row in common: nothing to compare.');
  return lines.join('\n');
}
