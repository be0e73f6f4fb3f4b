/**
 * @module test/support/bursts
 * Bursts of concurrent ShouldRateLimit calls spread round-robin over several
 * rate-limit services on one Redis, and what they were answered: for the
 * burst tests and the benchmark. One limit of {@link BURST_LIMIT} an hour on
 * descriptor `k` of domain `burst`; each burst counts on a value of its own.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createRateLimitClient,
  RateLimitCallError,
  type RateLimitClient,
  type RateLimitRequest,
} from '../../src/ratelimit';
import { Pool } from 'undici';
import { REPO_ROOT, startCli, type CliServer } from './process';
import { NO_BOUND_MS } from './polling';

/** Hits a window of the burst limit admits. */
export const BURST_LIMIT = 100;
const WINDOW_MS = 3_600_000;

/** Hits per call: the same for every call, or 1, 3, 7, 40 in turn. */
export type HitsMode = 1 | 3 | 7 | 40 | 'mixed';
export const HITS_MODES: readonly HitsMode[] = [1, 3, 7, 40, 'mixed'];
const MIXED = [1, 3, 7, 40];

export function hitsOf(mode: HitsMode, i: number): number {
  return mode === 'mixed' ? MIXED[i % MIXED.length] : mode;
}

/** What the calls of one burst were answered. */
export interface BurstOutcome {
  ok: number;
  /** The hits the OK answers carried. */
  okHits: number;
  overLimit: number;
  /** Calls that failed, by gRPC status name. */
  errors: Record<string, number>;
  errorCount: number;
  /** `limit_remaining` of each OK answer. */
  remaining: number[];
  /** Milliseconds from each call to its answer, sorted. */
  latenciesMs: number[];
}

/** The config folder of the burst services: a `ratelimit.yaml` with the burst limit. Removed by `remove()`. */
export function burstConfigDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bursts-'));
  writeFileSync(
    path.join(dir, 'ratelimit.yaml'),
    `domain: burst\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: ${BURST_LIMIT}}\n`,
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `count` real `gatehouse serve ratelimit` processes on the Redis at `redisUrl`. */
export async function startRateLimitProcesses(count: number, dir: string, redisUrl: string): Promise<CliServer[]> {
  return Promise.all(
    Array.from({ length: count }, () =>
      startCli(['serve', 'ratelimit', '--port', '0', '--config', dir, '--redis', redisUrl], {
        env: { LOG_LEVEL: 'error' },
      }),
    ),
  );
}

/** Clients of the services, with no deadline a call could reach: only the service can fail a call. */
export function burstClients(servers: readonly { address: string }[]): RateLimitClient[] {
  return servers.map((s) => createRateLimitClient(s.address, { timeoutMs: NO_BOUND_MS }));
}

/**
 * Resolves at once, or once the current window has begun when it ends within
 * `marginMs`: a burst split over two windows would be admitted twice.
 */
export async function clearOfWindowEnd(marginMs = 5000): Promise<void> {
  const left = WINDOW_MS - (Date.now() % WINDOW_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/**
 * Runs a burst until one run began and ended within one window of the
 * limit, and resolves with that run's outcome. A burst split over two
 * windows is admitted twice: it is not what a test counts, and a loaded
 * machine can make a burst last past any margin left before a window's
 * end. `attempt` numbers the runs, so that each counts on a value of its
 * own.
 */
export async function withinOneWindow<T>(run: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    await clearOfWindowEnd();
    const window = Math.floor(Date.now() / WINDOW_MS);
    const outcome = await run(attempt);
    if (Math.floor(Date.now() / WINDOW_MS) === window) return outcome;
  }
}

/** `size` concurrent calls counting on `value`, round-robin over `clients`. */
export async function burst(
  clients: readonly RateLimitClient[],
  size: number,
  mode: HitsMode,
  value: string,
): Promise<BurstOutcome> {
  const out: BurstOutcome = {
    ok: 0,
    okHits: 0,
    overLimit: 0,
    errors: {},
    errorCount: 0,
    remaining: [],
    latenciesMs: [],
  };
  const descriptors = [{ entries: [{ key: 'k', value }] }];
  const calls: Promise<void>[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const hits = hitsOf(mode, i);
    const request: RateLimitRequest = { domain: 'burst', descriptors, hitsAddend: hits };
    const started = performance.now();
    calls[i] = clients[i % clients.length].shouldRateLimit(request).then(
      (response) => {
        out.latenciesMs.push(performance.now() - started);
        if (response.overallCode === 'OK') {
          out.ok++;
          out.okHits += hits;
          // An empty handler (the benchmark's baseline) sends no status.
          if (response.statuses.length > 0) out.remaining.push(response.statuses[0].limitRemaining);
        } else out.overLimit++;
      },
      (err: unknown) => {
        const name = err instanceof RateLimitCallError ? String(err.code) : String(err);
        out.errors[name] = (out.errors[name] ?? 0) + 1;
        out.errorCount++;
      },
    );
  }
  await Promise.all(calls);
  out.latenciesMs.sort((a, b) => a - b);
  return out;
}

/** The `q` quantile (0..1) of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

/**
 * The demo config with the labelled route's X-Gateway-Test-Allow limited to
 * {@link BURST_LIMIT} an hour, and users unlimited: each gateway burst counts
 * on a header value of its own. `timeoutMs` sets the RateLimitService's
 * `timeout_ms` (the demo's default otherwise). Removed by `remove()`.
 */
export function gatewayConfigDir(options: { timeoutMs?: number } = {}): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-gateway-bursts-'));
  cpSync(path.join(REPO_ROOT, 'config'), dir, { recursive: true });
  if (options.timeoutMs !== undefined) {
    const services = path.join(dir, 'services.yaml');
    const record = '      service: ratelimit\n      domain: gateway\n';
    const text = readFileSync(services, 'utf8');
    if (!text.includes(record))
      throw new Error('the demo services.yaml has no RateLimitService record to set timeout_ms in');
    writeFileSync(services, text.replace(record, `${record}      timeout_ms: ${options.timeoutMs}\n`));
  }
  writeFileSync(
    path.join(dir, 'ratelimit.yaml'),
    `domain: gateway\ndescriptors:\n  - key: x-gateway-test-allow\n    rate_limit: {unit: hour, requests_per_unit: ${BURST_LIMIT}}\n  - key: user\n    rate_limit: {unlimited: true}\n`,
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `count` real gateways (`gatehouse start`) on the Redis at `redisUrl`, serving `dir`. */
export async function startGateways(count: number, dir: string, redisUrl: string): Promise<CliServer[]> {
  return Promise.all(
    Array.from({ length: count }, () =>
      startCli(['start', '--config', dir, '--no-watch', '--redis', redisUrl], {
        env: { PORT: '0', GRPC_PORT: '0', LOG_LEVEL: 'warn' },
      }),
    ),
  );
}

const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;

/** Connection pools to the gateways, wide enough for a burst of `size` at once. */
export function gatewayPools(gateways: readonly CliServer[], size: number): Pool[] {
  return gateways.map((g) => new Pool(g.address, { connections: Math.ceil(size / gateways.length) }));
}

/**
 * `size` concurrent GETs of the labelled route as alice, round-robin over
 * `pools`, counting on the X-Gateway-Test-Allow value `value` (none: only
 * the unlimited user). Resolves how many got each status.
 */
export async function gatewayBurst(
  pools: readonly Pool[],
  size: number,
  value?: string,
): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  const headers: Record<string, string> = { authorization: ALICE };
  if (value !== undefined) headers['x-gateway-test-allow'] = value;
  await Promise.all(
    Array.from({ length: size }, async (_, i) => {
      const res = await pools[i % pools.length].request({ method: 'GET', path: '/v1/hotels', headers });
      await res.body.dump();
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
    }),
  );
  return statuses;
}
