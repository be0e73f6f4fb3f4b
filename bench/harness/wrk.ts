/**
 * @module bench/harness/wrk
 * One run of Debian's wrk pinned to the load CPU, with bench/harness/wrk.lua:
 * one thread, a fixed number of connections, GET of one URL, optionally an
 * Authorization header and a paced rate. Returns what its done() printed.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const SCRIPT = join(__dirname, 'wrk.lua');

export interface WrkOptions {
  url: string;
  seconds: number;
  connections: number;
  /** The CPU (or CPUs, as taskset writes them: `0-1`) wrk runs on. */
  cpu: number | string;
  authorization?: string;
  /** Requests a second to pace at; none: as fast as the server answers. */
  rate?: number;
}

/** What one wrk run counted; latencies in milliseconds. */
export interface WrkResult {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** Connection, read and write errors and timeouts. */
  socketErrors: number;
  /** Answers of status 400 or more. */
  statusErrors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

interface WrkJson {
  requests: number;
  duration_us: number;
  connect_errors: number;
  read_errors: number;
  write_errors: number;
  timeouts: number;
  status_errors: number;
  p50_us: number;
  p99_us: number;
  max_us: number;
}

/** Runs wrk; throws with its output if it fails or prints no result. */
export function runWrk(options: WrkOptions): Promise<WrkResult> {
  const args = [
    '-c',
    String(options.cpu),
    'wrk',
    '-t1',
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '--timeout',
    '10s',
    '-s',
    SCRIPT,
    options.url,
  ];
  const env = {
    ...process.env,
    BENCH_AUTHORIZATION: options.authorization ?? '',
    BENCH_RATE: options.rate ? String(options.rate) : '',
  };
  return new Promise((resolve, reject) => {
    const child = spawn('taskset', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = /^BENCH_JSON (.*)$/m.exec(out);
      if (code !== 0 || !line)
        return reject(new Error(`wrk ${args.slice(2).join(' ')} failed (${code}): ${out.trim()}`));
      const r = JSON.parse(line[1]) as WrkJson;
      const seconds = r.duration_us / 1e6;
      resolve({
        requests: r.requests,
        seconds,
        reqPerSec: r.requests / seconds,
        socketErrors: r.connect_errors + r.read_errors + r.write_errors + r.timeouts,
        statusErrors: r.status_errors,
        p50Ms: r.p50_us / 1000,
        p99Ms: r.p99_us / 1000,
        maxMs: r.max_us / 1000,
      });
    });
  });
}
