/**
 * @module bench/hardening/gateway
 * A gateway process for the hardening measures: `gatehouse start` from a
 * built tree (this checkout's dist/, or another's), pinned to a CPU, its
 * log read as it comes, its memory read from /proc, and check_alive asked
 * on a schedule to see how long the event loop is held.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';

/** The CPU the gateway runs on; the measuring process runs on the other (see ./run). */
export const SERVER_CPU = 0;

/** A gateway under measure. */
export interface GatewayProcess {
  readonly child: ChildProcess;
  /** Its base URL, once it listens; undefined when it exited first. */
  readonly url?: string;
  /** What it logged so far, both streams. */
  log(): string;
  /** Resident memory now and at its peak, in MiB. */
  memory(): { rssMb: number; peakMb: number };
  /** Resolves once a log line matches. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<string>;
  stop(): Promise<void>;
}

/** Starts `gatehouse start --config <dir>` from `dist`, pinned; resolves once it listens, or has exited. */
export async function startGateway(dist: string, configDir: string, dataDir: string): Promise<GatewayProcess> {
  const args = [
    '-c',
    String(SERVER_CPU),
    process.execPath,
    join(dist, 'cli', 'main.js'),
    'start',
    '--config',
    configDir,
    '--data',
    dataDir,
    '--port',
    '0',
    '--grpc-port',
    '0',
    '--no-watch',
  ];
  const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const waiter of [...waiters]) {
      const match = waiter.pattern.exec(text);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match[0]);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = once(child, 'exit');
  const waitFor = (pattern: RegExp, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const match = pattern.exec(text);
      if (match) return resolve(match[0]);
      const timer = setTimeout(
        () => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${text.slice(-2000)}`)),
        timeoutMs,
      );
      waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
  const url = await Promise.race([
    waitFor(/listening on (http:\/\/\S+)/, 120_000).then((line) => line.replace('listening on ', '')),
    exited.then(() => undefined),
  ]);
  return {
    child,
    url,
    log: () => text,
    memory() {
      // taskset execs node: the child's pid is the gateway's.
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
    },
    waitFor,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** How check_alive was answered while something ran: the longest and the 99th percentile, in ms. */
export interface Probe {
  answers: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

/** Order statistics of `values`. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** One GET, its status and how long it took in ms. */
export function timedGet(
  url: string,
  path: string,
  agent: http.Agent,
  headers: Record<string, string> = {},
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${path}`, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
    });
    req.on('error', reject);
  });
}

/** Asks check_alive every `everyMs` until `stop` resolves; how it was answered. */
export async function probeWhile(url: string, stop: Promise<unknown>, everyMs = 10): Promise<Probe> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  let done = false;
  void stop.finally(() => (done = true));
  while (!done) {
    const { ms } = await timedGet(url, '/gateway/v0/check_alive', agent);
    times.push(ms);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  agent.destroy();
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    answers: times.length,
    medianMs: round(quantile(times, 0.5)),
    p99Ms: round(quantile(times, 0.99)),
    maxMs: round(Math.max(0, ...times)),
  };
}
