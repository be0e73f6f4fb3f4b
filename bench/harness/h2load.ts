/**
 * @module bench/harness/h2load
 * Load from h2load (nghttp2's HTTP/2 load generator, Debian's
 * nghttp2-client), over a few connections with many streams each: gRPC
 * unary calls (one request body, already framed as a gRPC message), or GETs
 * with prior knowledge (h2c). A load written in C: a
 * Node client of grpc-js spends several times the server's CPU on a call,
 * and from the other CPU it could not load a server to its limit.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface H2loadOptions {
  /** `127.0.0.1:port`. */
  address: string;
  /** The method's path, `/package.Service/Method`. */
  path: string;
  /** The serialized request message (without gRPC's 5-byte prefix). */
  message: Buffer;
  seconds: number;
  /** Streams in flight, over two connections. */
  concurrency: number;
  /** The CPU to pin h2load to, if any. */
  cpu?: number;
}

export interface H2loadResult {
  count: number;
  errors: number;
  seconds: number;
  p99Ms: number;
}

/** Whether h2load is on the PATH. */
export function hasH2load(): boolean {
  return spawnSync('h2load', ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Runs h2load once; rejects if it fails or any request does not succeed at the HTTP level. */
export function runH2load(options: H2loadOptions): Promise<H2loadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-h2load-'));
  const body = join(dir, 'body');
  const framed = Buffer.alloc(5 + options.message.length);
  framed.writeUInt32BE(options.message.length, 1);
  options.message.copy(framed, 5);
  writeFileSync(body, framed);
  const connections = 2;
  const args = [
    ...['-c', String(connections), '-m', String(Math.max(1, Math.round(options.concurrency / connections)))],
    ...['-d', body, '-H', 'content-type: application/grpc', '-H', 'te: trailers'],
    `http://${options.address}${options.path}`,
  ];
  return h2load(args, options.seconds, options.cpu, dir);
}

/** An HTTP/2 GET load with prior knowledge (h2c): `connections`, each with `streams` in flight. */
export interface H2loadGetOptions {
  url: string;
  connections: number;
  streams: number;
  seconds: number;
  headers?: Record<string, string>;
  cpu?: number;
}

/** Runs h2load's GETs once; rejects if it fails or any request does not succeed at the HTTP level. */
export function runH2loadGet(options: H2loadGetOptions): Promise<H2loadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-h2load-'));
  const args = [
    ...['-c', String(options.connections), '-m', String(options.streams)],
    ...Object.entries(options.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    options.url,
  ];
  return h2load(args, options.seconds, options.cpu, dir);
}

/** Runs h2load with `args` for `seconds` (pinned to `cpu`), its latency log in `dir`, which it removes. */
function h2load(args: string[], seconds: number, cpu: number | undefined, dir: string): Promise<H2loadResult> {
  const log = join(dir, 'log');
  const all = ['-D', String(seconds), '--log-file', log, ...args];
  const command = cpu === undefined ? ['h2load', ...all] : ['taskset', '-c', String(cpu), 'h2load', ...all];
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  return new Promise<H2loadResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      try {
        const finished = /finished in ([\d.]+)s, ([\d.]+) req\/s/.exec(out);
        const requests =
          /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
        if (code !== 0 || !finished || !requests) throw new Error(`h2load failed (${code}): ${out.trim().slice(-500)}`);
        // Columns: start (µs since the epoch), HTTP status, µs to the end of the answer.
        const latencies = readFileSync(log, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => Number(line.split('\t')[2]) / 1000)
          .sort((a, b) => a - b);
        resolve({
          count: Number(requests[3]),
          errors: Number(requests[4]) + Number(requests[5]) + (Number(requests[2]) - Number(requests[3])),
          seconds: Number(requests[3]) / Number(finished[2]),
          p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
        });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
