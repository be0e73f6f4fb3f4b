/**
 * @module bench/ratelimit
 * Throughput of the rate-limit gRPC service against an empty grpc-js unary
 * handler on the same machine and run: the handler with the memory store,
 * then with Redis (a redis-server of its own). The load comes from a child
 * process, so that client and server do not share an event loop.
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
import * as grpc from '@grpc/grpc-js';
import {
  createRateLimitClient,
  createRateLimitGrpcServer,
  createRateLimitService,
  createRedisStore,
  ENVOY_V3_SERVICE,
  type RateLimitRequest,
  type RateLimitStore,
} from '../src/ratelimit';
import { rateLimitProtos } from '../src/ratelimit/grpc/protos';
import { startRedis } from '../test/ratelimit/support/redis-server';
import { median } from './harness/stats';

/** One line of the table. */
export interface Row {
  bench: 'ratelimit';
  case: string;
  reqPerSec: number;
  p99Ms: number;
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

const SILENT = { info() {}, warn() {}, error() {} };
const USERS = 100;

/** What a gateway sends: its test header and the user. Limits are high: every call counts. */
function requestFor(i: number): RateLimitRequest {
  return {
    domain: 'gateway',
    descriptors: [{ entries: [{ key: 'x-gateway-test-allow', value: 'bench' }] }, { entries: [{ key: 'user', value: `user${i % USERS}` }] }],
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
  while (Date.now() < warmUntil) await Promise.all(requests.slice(0, concurrency).map((r) => client.shouldRateLimit(r)));

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
  return { count: latencies.length, errors, seconds: elapsed, p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
}

/** Runs the load loop in a child process, pinned to `cpu` when given. */
function runLoad(address: string, seconds: number, concurrency: number, cpu?: number): Promise<LoadResult> {
  const command = [process.execPath, '--import', 'tsx', __filename, '--load', address, String(seconds), String(concurrency)];
  const pinned = cpu === undefined ? command : ['taskset', '-c', String(cpu), ...command];
  const child = spawn(pinned[0], pinned.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the load process exited with ${code}`));
      else resolve(JSON.parse(out) as LoadResult);
    });
  });
}

/** A grpc-js server with the envoy v3 method and a handler that answers a constant. */
export async function startEmptyServer(): Promise<{ port: number; stop(): Promise<void> }> {
  const server = new grpc.Server();
  const answer = { overall_code: 'OK' };
  server.addService(rateLimitProtos()[ENVOY_V3_SERVICE] as grpc.ServiceDefinition, {
    ShouldRateLimit: (_call: grpc.ServerUnaryCall<object, object>, callback: grpc.sendUnaryData<object>) => callback(null, answer),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port, stop: () => new Promise((resolve) => server.tryShutdown(() => resolve())) };
}

async function startService(store?: RateLimitStore): Promise<{ port: number; stop(): Promise<void> }> {
  const service = createRateLimitService({ limits: LIMITS, store, logger: SILENT });
  const server = createRateLimitGrpcServer(service, { port: 0 });
  const port = await server.start();
  return {
    port,
    async stop() {
      await server.stop();
      await service.close();
    },
  };
}

/**
 * Runs the three cases, interleaved over several rounds so that a burst of
 * other work on the machine hits every case alike: req/s and p99 are the
 * medians over the rounds, the ratio the median of the same-round ratios to
 * the empty handler. Returns the rows; prints nothing.
 */
export async function runRateLimitBench(
  options: { seconds?: number; concurrency?: number; rounds?: number; loadCpu?: number } = {},
): Promise<Row[]> {
  const env = process.env;
  const seconds = options.seconds ?? Number(env.RATELIMIT_BENCH_SECONDS || env.BENCH_DURATION || 5);
  const concurrency = options.concurrency ?? Number(env.RATELIMIT_BENCH_CONCURRENCY || 64);
  const rounds = options.rounds ?? Number(env.RATELIMIT_BENCH_ROUNDS || env.BENCH_ROUNDS || 3);
  const loadCpu = options.loadCpu ?? (env.BENCH_LOAD_CPU ? Number(env.BENCH_LOAD_CPU) : undefined);
  const redis = await startRedis();
  const servers: { port: number; stop(): Promise<void> }[] = [];
  try {
    const store = createRedisStore({ url: redis.url, timeoutMs: 1000 });
    await store.ready();
    servers.push(await startEmptyServer(), await startService(), await startService(store));
    const results: LoadResult[][] = servers.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < servers.length; i++) {
        const r = await runLoad(`127.0.0.1:${servers[i].port}`, seconds, concurrency, loadCpu);
        if (r.errors > 0) throw new Error(`case ${i}: ${r.errors} calls failed`);
        results[i].push(r);
      }
    }
    const rps = (r: LoadResult) => r.count / r.seconds;
    const row = (name: string, i: number, target?: number): Row => ({
      bench: 'ratelimit',
      case: name,
      reqPerSec: Math.round(median(results[i].map(rps))),
      p99Ms: Math.round(median(results[i].map((r) => r.p99Ms)) * 100) / 100,
      ratio: Math.round(median(results[i].map((r, round) => rps(r) / rps(results[0][round]))) * 1000) / 1000,
      ...(target === undefined ? {} : { target }),
    });
    return [row('empty grpc-js handler', 0), row('ShouldRateLimit, memory store', 1, 0.9), row('ShouldRateLimit, Redis store', 2, 0.6)];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await redis.stop();
  }
}

/** The rows as a plain-text table. */
export function formatRows(rows: readonly Row[]): string {
  const lines = [['case', 'req/s', 'p99 ms', 'ratio', 'target']];
  for (const r of rows) lines.push([r.case, String(r.reqPerSec), r.p99Ms.toFixed(2), r.ratio.toFixed(3), r.target === undefined ? '' : `>= ${r.target}`]);
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines.map((l) => l.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')).join('\n');
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
        const { burstTargetsMet, formatBurstBench, runBurstBench } = require('./ratelimit-bursts') as typeof import('./ratelimit-bursts');
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
