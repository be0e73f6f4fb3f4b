/**
 * @module bench/grpc-upstream
 * `npm run bench -- grpc`: what a gRPC unary call costs the gateway that
 * proxies it, against what it costs the upstream itself. The upstream is
 * grpc-js answering envoy v3's ShouldRateLimit with nothing to do
 * (peers/grpc-empty.js); the gateway is `gatehouse start` from dist/ with a
 * Mapping `grpc: true` to it (no auth: the proxying alone). Both on the
 * server CPU, h2load on the load CPU, the same calls in flight, in turns:
 * straight to the upstream, then through the gateway. Its goal: the
 * gateway's CPU a call at most 2x the upstream's own, as the median of the
 * ratios of the same rounds.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { ENVOY_V3_SERVICE } from '../src/ratelimit';
import { requestToProto } from '../src/ratelimit/grpc/messages/codec';
import { methodOf } from '../src/ratelimit/grpc/protos';
import { DIST } from './harness/deployments';
import { runH2load } from './harness/h2load';
import { LOAD_CPU, SERVER_CPU } from './harness/measure';
import { cpuMicros, requireTools, startPinned, stopAll, waitUntilServing } from './harness/processes';
import type { Goal } from './harness/report';
import type { ResultRow } from './harness/results';
import type { Settings } from './harness/settings';
import { median } from './harness/stats';

const ROOT = join(__dirname, '..');
/** The goal: the gateway's CPU a call over the upstream's. */
export const GRPC_GOAL = 2;
const CONCURRENCY = 64;

interface Turn {
  callsPerSec: number;
  /** The upstream's CPU a call, straight or through the gateway. */
  upstreamUs: number;
  /** The gateway's CPU a call; 0 straight to the upstream. */
  gatewayUs: number;
}

export interface GrpcUpstreamBench {
  direct: Turn[];
  proxied: Turn[];
}

/** Starts the upstream pinned; resolves its pid and port once it says where it listens. */
function startUpstream(): Promise<{ pid: number; port: number; stop(): void }> {
  const child = spawn(
    'taskset',
    ['-c', String(SERVER_CPU), process.execPath, join(__dirname, 'peers', 'grpc-empty.js')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`the gRPC upstream exited (${code}) before listening`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /listening on 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port) resolve({ pid: child.pid!, port: Number(port), stop: () => child.stdin.end() });
    });
  });
}

export async function runGrpcUpstreamBench(settings: Settings): Promise<GrpcUpstreamBench> {
  requireTools(['taskset', 'h2load']);
  const method = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit');
  const message = method.requestSerialize(
    requestToProto({ domain: 'bench', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] }),
  );
  const upstream = await startUpstream();
  const dir = mkdtempSync(join(os.tmpdir(), 'gatehouse-bench-grpc-'));
  const config = join(dir, 'config');
  cpSync(join(ROOT, 'config'), config, { recursive: true });
  writeFileSync(
    join(config, 'grpc-upstream.yaml'),
    `apiVersion: gateway/v1\nkind: Mapping\nname: grpc-upstream\nprefix: /envoy.service.ratelimit.v3.RateLimitService/\nrewrite: ""\nservice: 127.0.0.1:${upstream.port}\ngrpc: true\nbypass_auth: true\n`,
  );
  const port = 20000 + Math.floor(Math.random() * 20000);
  const gateway = startPinned(
    {
      name: 'gatehouse',
      command: process.execPath,
      args: [
        join(DIST, 'cli', 'main.js'),
        'start',
        '--config',
        config,
        '--port',
        String(port),
        '--grpc-port',
        '0',
        '--no-watch',
      ],
      env: { ...process.env, LOG_LEVEL: 'warn', GATEHOUSE_DATA: join(dir, 'data') },
      port,
    },
    SERVER_CPU,
  );
  try {
    await waitUntilServing(gateway);
    const result: GrpcUpstreamBench = { direct: [], proxied: [] };
    const measure = async (through: boolean): Promise<Turn> => {
      const address = `127.0.0.1:${through ? port : upstream.port}`;
      const load = (seconds: number) =>
        runH2load({ address, path: method.path, message, seconds, concurrency: CONCURRENCY, cpu: LOAD_CPU });
      await load(settings.warmup);
      const up0 = cpuMicros([upstream.pid]);
      const gw0 = cpuMicros([gateway.child.pid!]);
      const r = await load(settings.duration);
      if (r.errors > 0) throw new Error(`${r.errors} calls failed ${through ? 'through the gateway' : 'straight'}`);
      if (r.count === 0) throw new Error('no call answered');
      return {
        callsPerSec: r.count / r.seconds,
        upstreamUs: (cpuMicros([upstream.pid]) - up0) / r.count,
        gatewayUs: through ? (cpuMicros([gateway.child.pid!]) - gw0) / r.count : 0,
      };
    };
    for (let round = 0; round < settings.rounds; round++) {
      for (const through of round % 2 === 0 ? [false, true] : [true, false]) {
        const turn = await measure(through);
        (through ? result.proxied : result.direct).push(turn);
        process.stderr.write(
          `  round ${round + 1}/${settings.rounds} ${through ? 'through the gateway' : 'straight'}: ${Math.round(turn.callsPerSec)} calls/s, upstream ${turn.upstreamUs.toFixed(1)} µs, gateway ${turn.gatewayUs.toFixed(1)} µs CPU a call\n`,
        );
      }
    }
    return result;
  } finally {
    await stopAll([gateway]);
    upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The median of the same-round ratios of the gateway's CPU a call to the upstream's own (straight). */
export function grpcRatio(bench: GrpcUpstreamBench): number {
  return median(bench.direct.map((d, i) => bench.proxied[i].gatewayUs / d.upstreamUs));
}

export function formatGrpcUpstream(bench: GrpcUpstreamBench): string {
  const med = (turns: Turn[], pick: (t: Turn) => number) => median(turns.map(pick));
  return [
    '| unary calls (h2load, 64 in flight) | calls/s | upstream µs CPU/call | gateway µs CPU/call |',
    '|---|---|---|---|',
    `| straight to the upstream | ${Math.round(med(bench.direct, (t) => t.callsPerSec))} | ${med(bench.direct, (t) => t.upstreamUs).toFixed(1)} | |`,
    `| through the gateway | ${Math.round(med(bench.proxied, (t) => t.callsPerSec))} | ${med(bench.proxied, (t) => t.upstreamUs).toFixed(1)} | ${med(bench.proxied, (t) => t.gatewayUs).toFixed(1)} |`,
    '',
    `gateway ÷ upstream CPU a call, median of the same-round ratios: ${grpcRatio(bench).toFixed(2)}`,
  ].join('\n');
}

export function grpcUpstreamRows(bench: GrpcUpstreamBench): ResultRow[] {
  const round1 = (x: number) => Math.round(x * 10) / 10;
  return [
    {
      table: 'grpc-upstream',
      row: 'through the gateway',
      figures: {
        'calls/s': Math.round(median(bench.proxied.map((t) => t.callsPerSec))),
        'gateway CPU µs/call': round1(median(bench.proxied.map((t) => t.gatewayUs))),
        'upstream CPU µs/call': round1(median(bench.direct.map((t) => t.upstreamUs))),
        'gateway vs upstream': Math.round(grpcRatio(bench) * 1000) / 1000,
      },
      rounds: bench.proxied.map((t, i) => ({ ...t, directUpstreamUs: bench.direct[i].upstreamUs })),
    },
  ];
}

export function grpcUpstreamGoal(bench: GrpcUpstreamBench): Goal {
  const ratio = grpcRatio(bench);
  return {
    title: `10. a gRPC unary call through the gateway costs it <= ${GRPC_GOAL}x the upstream's own CPU`,
    detail: `${ratio.toFixed(2)}x`,
    met: ratio <= GRPC_GOAL,
  };
}
