/**
 * @module bench/ratelimit
 * Throughput of the rate-limit gRPC service against an empty grpc-js unary
 * handler on the same machine and run: `gatehouse serve ratelimit` from the
 * compiled dist/, as a user runs it, with the memory store, then with Redis
 * (a redis-server of its own); the empty handler is a peer of its own
 * (peers/grpc-empty.js). Each case is served by a process of its own,
 * stopped while the others are measured; the load is
 * h2load (Debian's nghttp2-client) when installed, else a Node client in a
 * child process (RATELIMIT_BENCH_LOAD=node chooses it), which cannot load
 * a server to its limit from the other CPU.
 *
 *   node --import tsx bench/ratelimit.ts
 *
 * Then the bursts of bench/ratelimit-bursts.ts (exactness and latency under
 * bursts of concurrent calls, through real processes).
 *
 *   node --import tsx bench/ratelimit.ts --json
 *
 * prints the rows alone, as JSON: `npm run bench` runs it so, pinned to the
 * server CPU with BENCH_LOAD_CPU naming the CPU the load is pinned to.
 *
 * RATELIMIT_BENCH_SECONDS (per case and round, default BENCH_DURATION, else
 * 5), RATELIMIT_BENCH_ROUNDS (default BENCH_ROUNDS, else 3) and
 * RATELIMIT_BENCH_CONCURRENCY (default 64) tune the runs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRateLimitClient, ENVOY_V3_SERVICE, type RateLimitRequest } from '../src/ratelimit';
import { requestToProto } from '../src/ratelimit/grpc/messages/codec';
import { methodOf } from '../src/ratelimit/grpc/protos';
import { startRedis } from '../test/support/redis';
import { hasH2load, runH2load } from './harness/h2load';
import { ensureBuilt } from './harness/build';
import { cpuMicros } from './harness/processes';
import { median } from './harness/stats';

/** One line of the table. */
export interface Row {
  bench: 'ratelimit';
  case: string;
  reqPerSec: number;
  p99Ms: number;
  /** CPU time of the server process a call, in µs (median over the rounds). */
  cpuUs: number;
  /** Requests per second relative to the empty handler of the same run. */
  ratio: number;
  /** The ratio the case should reach, when it has a target. */
  target?: number;
}

interface LoadResult {
  count: number;
  errors: number;
  seconds: number;
  p99Ms: number;
}

const USERS = 100;

/** What a gateway sends: its test header and the user. Limits are high: every call counts. */
function requestFor(i: number): RateLimitRequest {
  return {
    domain: 'gateway',
    descriptors: [
      { entries: [{ key: 'x-gateway-test-allow', value: 'bench' }] },
      { entries: [{ key: 'user', value: `user${i % USERS}` }] },
    ],
  };
}

const LIMITS = [
  {
    domain: 'gateway',
    descriptors: [
      { key: 'x-gateway-test-allow', rate_limit: { unit: 'second', requests_per_unit: 4_000_000_000 } },
      { key: 'user', rate_limit: { unit: 'minute', requests_per_unit: 4_000_000_000 } },
    ],
  },
];

/** The load loop, run in the child: `concurrency` calls in flight on one channel for `seconds`. */
async function loadLoop(address: string, seconds: number, concurrency: number): Promise<LoadResult> {
  const client = createRateLimitClient(address, { timeoutMs: 5000 });
  const requests = Array.from({ length: USERS }, (_, i) => requestFor(i));
  // Warm up the channel and the server's code paths.
  const warmUntil = Date.now() + 500;
  while (Date.now() < warmUntil)
    await Promise.all(requests.slice(0, concurrency).map((r) => client.shouldRateLimit(r)));

  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(seconds * 1e9));
  async function worker(): Promise<void> {
    while (process.hrtime.bigint() < end) {
      const t = process.hrtime.bigint();
      try {
        await client.shouldRateLimit(requests[i++ % USERS]);
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      } catch {
        errors++;
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  client.close();
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    errors,
    seconds: elapsed,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
  };
}

/** Runs the load loop in a child process, pinned to `cpu` when given. */
function runNodeLoad(address: string, seconds: number, concurrency: number, cpu?: number): Promise<LoadResult> {
  const command = [
    process.execPath,
    '--import',
    'tsx',
    __filename,
    '--load',
    address,
    String(seconds),
    String(concurrency),
  ];
  const pinned = cpu === undefined ? command : ['taskset', '-c', String(cpu), ...command];
  const child = spawn(pinned[0], pinned.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the load process exited with ${code}`));
      else resolve(JSON.parse(out) as LoadResult);
    });
  });
}

/** The three cases, each served by a process of its own. */
const CASES = ['empty', 'memory', 'redis'] as const;
type Case = (typeof CASES)[number];

const ROOT = join(__dirname, '..');
/** The empty handler: a peer of its own, in plain JavaScript, as the HTTP rows' peers. */
const EMPTY_PEER = join(__dirname, 'peers', 'grpc-empty.js');

/** A config folder holding `LIMITS` as its ratelimit.yaml (JSON is YAML). */
function limitsFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-limits-'));
  writeFileSync(join(dir, 'ratelimit.yaml'), `${JSON.stringify(LIMITS[0])}\n`);
  return dir;
}

/**
 * The command serving `kind`: the empty handler's peer, or `gatehouse serve
 * ratelimit` from the compiled dist/, as a user runs it (with Redis for
 * `redis`); each writes the port it bound in its first line.
 */
function caseCommand(kind: Case, config: string, redisUrl: string): string[] {
  if (kind === 'empty') return [process.execPath, EMPTY_PEER];
  const serve = [
    process.execPath,
    join(ROOT, 'dist', 'cli', 'main.js'),
    'serve',
    'ratelimit',
    '--port',
    '0',
    '--config',
    config,
    '--no-watch',
    '--drain-delay-ms',
    '0',
  ];
  return kind === 'redis' ? [...serve, '--redis', redisUrl] : serve;
}

interface CaseServer {
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts a server process for `kind`; it inherits this process's CPU affinity (the server CPU under `npm run bench`). */
function startCaseServer(kind: Case, config: string, redisUrl: string): Promise<CaseServer> {
  const [command, ...args] = caseCommand(kind, config, redisUrl);
  const env = { ...process.env, PORT: '0', NODE_ENV: 'production', LOG_LEVEL: 'warn' };
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the ${kind} server exited with ${code} before serving`)));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (!out.includes('\n')) return;
      child.removeAllListeners('exit');
      // "<name> listening on 127.0.0.1:<port> ..." from both.
      const port = Number(/listening on [^\s]*:(\d+)/.exec(out.split('\n')[0])?.[1]);
      if (!Number.isInteger(port) || port <= 0) {
        child.kill('SIGKILL');
        reject(new Error(`the ${kind} server did not say its port: ${out.split('\n')[0]}`));
        return;
      }
      child.stdout.resume();
      resolve({
        pid: child.pid!,
        port,
        stop: () =>
          new Promise<void>((done) => {
            // One that died (the reason the benchmark stops, perhaps) has nothing left to stop.
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGCONT');
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** Checks that `address` answers ShouldRateLimit OK, as h2load cannot (it sees HTTP statuses, not gRPC's). */
async function checkAnswers(address: string): Promise<void> {
  const client = createRateLimitClient(address, { timeoutMs: 5000 });
  try {
    const answer = await client.shouldRateLimit(requestFor(0));
    if (answer.overallCode !== 'OK') throw new Error(`${address} answered ${answer.overallCode}`);
  } finally {
    client.close();
  }
}

/** Waits until `address` answers OK: `serve ratelimit` listens before its Redis client has connected. */
async function answering(address: string, kind: Case): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      return await checkAnswers(address);
    } catch (err) {
      if (Date.now() > until) throw new Error(`the ${kind} server does not answer OK: ${(err as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Runs the three cases, each in a process of its own (stopped while another
 * is measured), interleaved over several rounds so that a burst of other
 * work on the machine hits every case alike: req/s, p99 and CPU µs a call
 * are the medians over the rounds, the ratio the median of the same-round
 * ratios to the empty handler. The load is h2load when it is installed, else
 * a Node client (which cannot load a server to its limit). Returns the
 * rows; prints nothing.
 */
export async function runRateLimitBench(
  options: { seconds?: number; concurrency?: number; rounds?: number; loadCpu?: number } = {},
): Promise<Row[]> {
  const env = process.env;
  const seconds = options.seconds ?? Number(env.RATELIMIT_BENCH_SECONDS || env.BENCH_DURATION || 5);
  const concurrency = options.concurrency ?? Number(env.RATELIMIT_BENCH_CONCURRENCY || 64);
  const rounds = options.rounds ?? Number(env.RATELIMIT_BENCH_ROUNDS || env.BENCH_ROUNDS || 3);
  const loadCpu = options.loadCpu ?? (env.BENCH_LOAD_CPU ? Number(env.BENCH_LOAD_CPU) : undefined);
  const h2load = hasH2load() && env.RATELIMIT_BENCH_LOAD !== 'node';
  const message = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').requestSerialize(requestToProto(requestFor(0)));
  const path = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit').path;
  ensureBuilt(ROOT);
  const redis = await startRedis();
  const config = limitsFolder();
  const servers: CaseServer[] = [];
  try {
    for (const kind of CASES) {
      const server = await startCaseServer(kind, config, redis.url);
      servers.push(server);
      await answering(`127.0.0.1:${server.port}`, kind);
    }
    for (const s of servers) process.kill(s.pid, 'SIGSTOP');
    const results: (LoadResult & { cpuUs: number })[][] = servers.map(() => []);
    for (let round = 0; round < rounds; round++) {
      // Each round starts one further along, so that no case always follows the same one.
      for (let turn = 0; turn < servers.length; turn++) {
        const i = (round + turn) % servers.length;
        const { pid, port } = servers[i];
        const address = `127.0.0.1:${port}`;
        process.kill(pid, 'SIGCONT');
        await checkAnswers(address);
        // Warmed up before the CPU time is read: the measured run is all of it.
        const load = (s: number) =>
          h2load
            ? runH2load({ address, path, message, seconds: s, concurrency, cpu: loadCpu })
            : runNodeLoad(address, s, concurrency, loadCpu);
        await load(1);
        // Every server process of the case: Redis's too.
        const pids = CASES[i] === 'redis' ? [pid, redis.pid] : [pid];
        const before = cpuMicros(pids);
        const r = await load(seconds);
        const cpuUs = (cpuMicros(pids) - before) / Math.max(1, r.count);
        await checkAnswers(address);
        process.kill(pid, 'SIGSTOP');
        if (r.errors > 0) throw new Error(`${CASES[i]}: ${r.errors} calls failed`);
        results[i].push({ ...r, cpuUs });
      }
    }
    const rps = (r: LoadResult) => r.count / r.seconds;
    const row = (name: string, i: number, target?: number): Row => ({
      bench: 'ratelimit',
      case: name,
      reqPerSec: Math.round(median(results[i].map(rps))),
      p99Ms: Math.round(median(results[i].map((r) => r.p99Ms)) * 100) / 100,
      cpuUs: Math.round(median(results[i].map((r) => r.cpuUs)) * 10) / 10,
      ratio: Math.round(median(results[i].map((r, round) => rps(r) / rps(results[0][round]))) * 1000) / 1000,
      ...(target === undefined ? {} : { target }),
    });
    return [
      row('empty grpc-js handler', 0),
      row('ShouldRateLimit, memory store', 1, 0.9),
      row('ShouldRateLimit, Redis store', 2, 0.6),
    ];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await redis.stop();
    rmSync(config, { recursive: true, force: true });
  }
}

/** The rows as a plain-text table. */
export function formatRows(rows: readonly Row[]): string {
  const lines = [['case', 'req/s', 'p99 ms', 'µs CPU/call', 'ratio', 'target']];
  for (const r of rows) {
    lines.push([
      r.case,
      String(r.reqPerSec),
      r.p99Ms.toFixed(2),
      r.cpuUs.toFixed(1),
      r.ratio.toFixed(3),
      r.target === undefined ? '' : `>= ${r.target}`,
    ]);
  }
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines
    .map((l) => l.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '))
    .join('\n');
}

if (require.main === module) {
  if (process.argv[2] === '--load') {
    const [address, seconds, concurrency] = process.argv.slice(3);
    void loadLoop(address, Number(seconds), Number(concurrency)).then((r) => process.stdout.write(JSON.stringify(r)));
  } else if (process.argv[2] === '--json') {
    runRateLimitBench().then(
      (rows) => process.stdout.write(`${JSON.stringify(rows)}\n`),
      (err: unknown) => {
        console.error(err);
        process.exitCode = 1;
      },
    );
  } else {
    runRateLimitBench().then(
      async (rows) => {
        console.log(formatRows(rows));
        const missed = rows.filter((r) => r.target !== undefined && r.ratio < r.target);
        if (missed.length) console.log(`below target: ${missed.map((r) => r.case).join(', ')}`);
        const { burstTargetsMet, formatBurstBench, runBurstBench } =
          require('./ratelimit-bursts') as typeof import('./ratelimit-bursts');
        const bursts = await runBurstBench();
        console.log(`\n${formatBurstBench(bursts)}`);
        if (!burstTargetsMet(bursts)) console.log('a burst target was missed');
      },
      (err: unknown) => {
        console.error(err);
        process.exitCode = 1;
      },
    );
  }
}
