/**
 * @module bench/ratelimit-bursts
 * Rate limits through Redis under bursts of concurrent calls, on real
 * processes sharing one redis-server of their own:
 *
 * - exactness: 3 `gatehouse serve ratelimit` processes, bursts of 1000 and
 *   3000 calls spread round-robin, hits_addend 1, 3, 7, 40 and mixed, a
 *   limit of 100: what the OK answers carried, the errors, the counter;
 * - latency: the p50 and p99 of a call under a burst of 1000, through one
 *   process (and through 3) deciding with Redis, against an empty grpc-js
 *   handler in a process of its own, the same burst from the same client;
 * - gateways: 3 `gatehouse start` on the demo config (its 20 ms timeout_ms),
 *   1000 concurrent labelled requests, a limit of 100: the statuses.
 *
 *   node --import tsx bench/ratelimit-bursts.ts
 *
 * RATELIMIT_BURST_REPEATS (bursts of each kind, default 5) tunes the runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createRateLimitClient, type RateLimitClient } from '../src/ratelimit';
import {
  BURST_LIMIT,
  burst,
  burstClients,
  burstConfigDir,
  clearOfWindowEnd,
  gatewayBurst,
  gatewayConfigDir,
  gatewayPools,
  HITS_MODES,
  quantile,
  startGateways,
  startRateLimitProcesses,
  type HitsMode,
} from '../test/support/bursts';
import { startRedis, type RedisProcess } from '../test/support/redis';
import { killAll } from '../test/support/process';

/** One burst through the 3 processes: what came back, and the counter in Redis. */
export interface BurstRun {
  ok: number;
  okHits: number;
  errors: number;
  counter: number;
}

export interface BurstRow {
  size: number;
  hits: HitsMode;
  runs: BurstRun[];
  /** Every run answered OK exactly the hits that fit, with no error. */
  exact: boolean;
}

export interface LatencyRow {
  case: string;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** p99 relative to the empty handler's. */
  ratio: number;
  /** The ratio not to pass, when the row has a target. */
  target?: number;
}

export interface GatewayRun {
  statuses: Record<number, number>;
  counter: number;
}

export interface BurstBench {
  bursts: BurstRow[];
  latency: LatencyRow[];
  gateways: GatewayRun[];
}

const LATENCY_BURST = 1000;
const GATEWAY_BURST = 1000;

/** The hits that fit the limit, for a uniform mode; for mixed, the whole limit (a quarter of the calls bring 1). */
function fits(mode: HitsMode): number {
  return mode === 'mixed' ? BURST_LIMIT : Math.floor(BURST_LIMIT / mode) * mode;
}

async function counterOf(redis: RedisProcess, pattern: string): Promise<number> {
  const keys = await redis.client.keys(pattern);
  return keys.length === 1 ? Number(await redis.client.get(keys[0])) : NaN;
}

/** The empty handler in a process of its own, as the rate-limit service is. */
async function spawnEmptyServer(): Promise<{ address: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(__dirname, 'peers', 'grpc-empty.js')], {
    env: { ...process.env, PORT: '0' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  while (!/listening on (\S+)\n/.test(out)) {
    if (child.exitCode !== null) throw new Error('the empty gRPC server exited');
    await once(child.stdout, 'data');
  }
  return { address: /listening on (\S+)\n/.exec(out)![1], child };
}

async function exactness(redis: RedisProcess, clients: RateLimitClient[], repeats: number): Promise<BurstRow[]> {
  const rows: BurstRow[] = [];
  for (const size of [1000, 3000]) {
    for (const hits of HITS_MODES) {
      const runs: BurstRun[] = [];
      for (let r = 0; r < repeats; r++) {
        await clearOfWindowEnd();
        const value = `exact-${size}-${hits}-${r}`;
        const out = await burst(clients, size, hits, value);
        runs.push({
          ok: out.ok,
          okHits: out.okHits,
          errors: out.errorCount,
          counter: await counterOf(redis, `gatehouse:ratelimit:burst_k_${value}_*`),
        });
      }
      const exact = runs.every((run) => run.errors === 0 && run.okHits === fits(hits) && run.counter === run.okHits);
      rows.push({ size, hits, runs, exact });
    }
  }
  return rows;
}

/** Bursts of each case in turn, `repeats` rounds, so that the load of the machine falls on each alike. */
async function latency(cases: { name: string; clients: RateLimitClient[] }[], repeats: number): Promise<LatencyRow[]> {
  const samples = cases.map(() => ({ latencies: [] as number[], errors: 0 }));
  for (let r = 0; r < repeats; r++) {
    for (let i = 0; i < cases.length; i++) {
      await clearOfWindowEnd();
      const out = await burst(cases[i].clients, LATENCY_BURST, 1, `latency-${i}-${r}`);
      samples[i].latencies.push(...out.latenciesMs);
      samples[i].errors += out.errorCount;
    }
  }
  const rounded = (ms: number) => Math.round(ms * 10) / 10;
  const p99s = samples.map((s) =>
    quantile(
      s.latencies.sort((a, b) => a - b),
      0.99,
    ),
  );
  return cases.map((c, i) => ({
    case: c.name,
    p50Ms: rounded(quantile(samples[i].latencies, 0.5)),
    p99Ms: rounded(p99s[i]),
    errors: samples[i].errors,
    ratio: Math.round((p99s[i] / p99s[0]) * 100) / 100,
    ...(i === 1 ? { target: 2 } : {}),
  }));
}

async function gatewayRuns(redis: RedisProcess, repeats: number): Promise<GatewayRun[]> {
  const config = gatewayConfigDir();
  try {
    const gateways = await startGateways(3, config.dir, redis.url);
    const pools = gatewayPools(gateways, GATEWAY_BURST);
    try {
      await gatewayBurst(pools, 30);
      const runs: GatewayRun[] = [];
      for (let r = 0; r < repeats; r++) {
        await clearOfWindowEnd();
        const value = `gateway-${r}`;
        const statuses = await gatewayBurst(pools, GATEWAY_BURST, value);
        runs.push({
          statuses,
          counter: await counterOf(redis, `gatehouse:ratelimit:gateway_x-gateway-test-allow_${value}_*`),
        });
      }
      return runs;
    } finally {
      await Promise.all(pools.map((p) => p.close()));
      await Promise.all(gateways.map((g) => g.stop()));
    }
  } finally {
    config.remove();
  }
}

/** Runs the three parts; prints nothing. */
export async function runBurstBench(options: { repeats?: number } = {}): Promise<BurstBench> {
  const repeats = options.repeats ?? Number(process.env.RATELIMIT_BURST_REPEATS ?? 5);
  const redis = await startRedis();
  const config = burstConfigDir();
  const clients: RateLimitClient[] = [];
  let empty: ChildProcess | undefined;
  try {
    const servers = await startRateLimitProcesses(3, config.dir, redis.url);
    const emptyServer = await spawnEmptyServer();
    empty = emptyServer.child;
    const three = burstClients(servers);
    const one = burstClients(servers.slice(0, 1));
    const emptyClient = [createRateLimitClient(emptyServer.address, { timeoutMs: 30_000 })];
    clients.push(...three, ...one, ...emptyClient);
    // Connections open and code warm, in every process.
    for (const c of [three, one, emptyClient]) await burst(c, 300, 1, 'warm-up');

    const bursts = await exactness(redis, three, repeats);
    const latencyRows = await latency(
      [
        { name: 'empty grpc-js handler, 1 process', clients: emptyClient },
        { name: 'ShouldRateLimit with Redis, 1 process', clients: one },
        { name: 'ShouldRateLimit with Redis, 3 processes', clients: three },
      ],
      repeats,
    );
    const gateways = await gatewayRuns(redis, repeats);
    return { bursts, latency: latencyRows, gateways };
  } finally {
    for (const c of clients) c.close();
    empty?.kill();
    await killAll();
    await redis.stop();
    config.remove();
  }
}

function table(lines: string[][]): string {
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  return lines
    .map((l) => l.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '))
    .join('\n');
}

/** The three parts as plain-text tables. */
export function formatBurstBench(result: BurstBench): string {
  const exact = [
    ['burst', 'hits', 'OK answers (hits they carried) / errors / Redis counter, per run', 'want', 'exact'],
  ];
  for (const row of result.bursts) {
    const runs = row.runs.map((r) => `${r.ok} (${r.okHits}) / ${r.errors} / ${r.counter}`).join(', ');
    exact.push([String(row.size), String(row.hits), runs, `${fits(row.hits)} hits`, row.exact ? 'yes' : 'NO']);
  }
  const lat = [['case', `p50 ms`, 'p99 ms', 'errors', 'p99 vs empty', 'target']];
  for (const r of result.latency)
    lat.push([
      r.case,
      r.p50Ms.toFixed(1),
      r.p99Ms.toFixed(1),
      String(r.errors),
      r.ratio.toFixed(2),
      r.target === undefined ? '' : `<= ${r.target}`,
    ]);
  const gw = [['run', '200', '429', 'other', 'Redis counter']];
  result.gateways.forEach((g, i) => {
    const other = Object.entries(g.statuses).filter(([s]) => s !== '200' && s !== '429');
    gw.push([
      String(i + 1),
      String(g.statuses[200] ?? 0),
      String(g.statuses[429] ?? 0),
      other.map(([s, n]) => `${n}×${s}`).join(' ') || '0',
      String(g.counter),
    ]);
  });
  return [
    `3 gatehouse serve ratelimit on one Redis, a limit of ${BURST_LIMIT}, bursts spread round-robin:`,
    table(exact),
    '',
    `A call under a burst of ${LATENCY_BURST} (pooled over the runs):`,
    table(lat),
    '',
    `3 gateways (gatehouse start, demo config, timeout_ms 20) on one Redis, ${GATEWAY_BURST} concurrent labelled requests, a limit of ${BURST_LIMIT}:`,
    table(gw),
  ].join('\n');
}

/** Whether every target of the bursts was met: exact answers, 0 errors, p99 within its bound, the gateways' statuses exact. */
export function burstTargetsMet(result: BurstBench): boolean {
  return (
    result.bursts.every((b) => b.exact) &&
    result.latency.every((r) => r.errors === 0 && (r.target === undefined || r.ratio <= r.target)) &&
    result.gateways.every(
      (g) =>
        g.statuses[200] === BURST_LIMIT && g.statuses[429] === GATEWAY_BURST - BURST_LIMIT && g.counter === BURST_LIMIT,
    )
  );
}

if (require.main === module) {
  runBurstBench().then(
    (result) => {
      console.log(formatBurstBench(result));
      if (!burstTargetsMet(result)) console.log('a burst target was missed');
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
