/**
 * @module bench/grpc-upstream
 * `npm run bench -- grpc`: what a gRPC unary call costs the gateway that
 * proxies it, against what it costs the upstream itself. The upstream is
 * grpc-js answering envoy v3's ShouldRateLimit with nothing to do
 * (peers/grpc-empty.js); the gateway is `gatehouse start` from dist/ with a
 * Mapping `grpc: true` to it (no auth: the proxying alone). Beside them, a
 * bare gRPC proxy on node:http2 (peers/h2-proxy.js), the floor of any proxy
 * on Node's HTTP/2. All on the server CPU, h2load on the load CPU, the same
 * calls in flight, in turns, one further along each round: straight to the
 * upstream, through the gateway, through the bare proxy. Its goal: the
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
  /** The upstream's CPU a call, straight or through a proxy. */
  upstreamUs: number;
  /** The proxy's CPU a call (the gateway's, or the bare proxy's); 0 straight to the upstream. */
  gatewayUs: number;
}

export interface GrpcUpstreamBench {
  direct: Turn[];
  /** Through the gateway. */
  proxied: Turn[];
  /** Through the bare node:http2 proxy. */
  floor: Turn[];
}

type Way = 'direct' | 'proxied' | 'floor';
const WAYS: readonly Way[] = ['direct', 'proxied', 'floor'];
const WAY_NAMES: Record<Way, string> = {
  direct: 'straight',
  proxied: 'through the gateway',
  floor: 'through a bare node:http2 proxy',
};

interface Peer {
  pid: number;
  port: number;
  stop(): void;
}

/** Starts a peer script pinned; resolves its pid and port once it says where it listens. */
function startPeer(script: string, env: NodeJS.ProcessEnv = {}): Promise<Peer> {
  const child = spawn('taskset', ['-c', String(SERVER_CPU), process.execPath, join(__dirname, 'peers', script)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening`)));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /listening on 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port)
        resolve({
          pid: child.pid!,
          port: Number(port),
          // Its standard input is a socket, not the pipe a shell would give it: it is told to stop as well.
          stop: () => {
            child.stdin.end();
            child.kill('SIGTERM');
          },
        });
    });
  });
}

export async function runGrpcUpstreamBench(settings: Settings): Promise<GrpcUpstreamBench> {
  requireTools(['taskset', 'h2load']);
  const method = methodOf(ENVOY_V3_SERVICE, 'ShouldRateLimit');
  const message = method.requestSerialize(
    requestToProto({ domain: 'bench', descriptors: [{ entries: [{ key: 'k', value: 'v' }] }] }),
  );
  const upstream = await startPeer('grpc-empty.js');
  const floor = await startPeer('h2-proxy.js', { UPSTREAM: `127.0.0.1:${upstream.port}` }).catch((err: unknown) => {
    upstream.stop();
    throw err;
  });
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
    const result: GrpcUpstreamBench = { direct: [], proxied: [], floor: [] };
    const proxyPid: Record<Way, number | null> = { direct: null, proxied: gateway.child.pid!, floor: floor.pid };
    const portOf: Record<Way, number> = { direct: upstream.port, proxied: port, floor: floor.port };
    const measure = async (way: Way): Promise<Turn> => {
      const address = `127.0.0.1:${portOf[way]}`;
      const load = (seconds: number) =>
        runH2load({ address, path: method.path, message, seconds, concurrency: CONCURRENCY, cpu: LOAD_CPU });
      await load(settings.warmup);
      const proxy = proxyPid[way];
      const up0 = cpuMicros([upstream.pid]);
      const gw0 = proxy === null ? 0 : cpuMicros([proxy]);
      const r = await load(settings.duration);
      if (r.errors > 0) throw new Error(`${r.errors} calls failed ${WAY_NAMES[way]}`);
      if (r.count === 0) throw new Error('no call answered');
      return {
        callsPerSec: r.count / r.seconds,
        upstreamUs: (cpuMicros([upstream.pid]) - up0) / r.count,
        gatewayUs: proxy === null ? 0 : (cpuMicros([proxy]) - gw0) / r.count,
      };
    };
    for (let round = 0; round < settings.rounds; round++) {
      for (let i = 0; i < WAYS.length; i++) {
        const way = WAYS[(i + round) % WAYS.length];
        const turn = await measure(way);
        result[way].push(turn);
        process.stderr.write(
          `  round ${round + 1}/${settings.rounds} ${WAY_NAMES[way]}: ${Math.round(turn.callsPerSec)} calls/s, upstream ${turn.upstreamUs.toFixed(1)} µs, proxy ${turn.gatewayUs.toFixed(1)} µs CPU a call\n`,
        );
      }
    }
    return result;
  } finally {
    await stopAll([gateway]);
    floor.stop();
    upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The median of the same-round ratios of the gateway's CPU a call to the upstream's own (straight). */
export function grpcRatio(bench: GrpcUpstreamBench): number {
  return median(bench.direct.map((d, i) => bench.proxied[i].gatewayUs / d.upstreamUs));
}

/** The same for the bare node:http2 proxy: the floor of the ratio on Node's HTTP/2. */
export function floorRatio(bench: GrpcUpstreamBench): number {
  return median(bench.direct.map((d, i) => bench.floor[i].gatewayUs / d.upstreamUs));
}

/** The median of the same-round ratios of the gateway's CPU a call to the bare proxy's. */
export function overFloor(bench: GrpcUpstreamBench): number {
  return median(bench.floor.map((f, i) => bench.proxied[i].gatewayUs / f.gatewayUs));
}

export function formatGrpcUpstream(bench: GrpcUpstreamBench): string {
  const med = (turns: Turn[], pick: (t: Turn) => number) => median(turns.map(pick));
  const row = (way: Way) => {
    const turns = bench[way];
    const proxy = way === 'direct' ? '' : med(turns, (t) => t.gatewayUs).toFixed(1);
    return `| ${WAY_NAMES[way]} | ${Math.round(med(turns, (t) => t.callsPerSec))} | ${med(turns, (t) => t.upstreamUs).toFixed(1)} | ${proxy} |`;
  };
  return [
    '| unary calls (h2load, 64 in flight) | calls/s | upstream µs CPU/call | proxy µs CPU/call |',
    '|---|---|---|---|',
    ...WAYS.map(row),
    '',
    `gateway ÷ upstream CPU a call, median of the same-round ratios: ${grpcRatio(bench).toFixed(2)}`,
    `bare node:http2 proxy ÷ upstream: ${floorRatio(bench).toFixed(2)}; gateway ÷ bare proxy: ${overFloor(bench).toFixed(2)}`,
  ].join('\n');
}

export function grpcUpstreamRows(bench: GrpcUpstreamBench): ResultRow[] {
  const round1 = (x: number) => Math.round(x * 10) / 10;
  const round3 = (x: number) => Math.round(x * 1000) / 1000;
  return [
    {
      table: 'grpc-upstream',
      row: 'through the gateway',
      figures: {
        'calls/s': Math.round(median(bench.proxied.map((t) => t.callsPerSec))),
        'gateway CPU µs/call': round1(median(bench.proxied.map((t) => t.gatewayUs))),
        'upstream CPU µs/call': round1(median(bench.direct.map((t) => t.upstreamUs))),
        'gateway vs upstream': round3(grpcRatio(bench)),
        'gateway vs bare proxy': round3(overFloor(bench)),
      },
      rounds: bench.proxied.map((t, i) => ({ ...t, directUpstreamUs: bench.direct[i].upstreamUs })),
    },
    {
      table: 'grpc-upstream',
      row: 'through a bare node:http2 proxy',
      figures: {
        'calls/s': Math.round(median(bench.floor.map((t) => t.callsPerSec))),
        'proxy CPU µs/call': round1(median(bench.floor.map((t) => t.gatewayUs))),
        'proxy vs upstream': round3(floorRatio(bench)),
      },
      rounds: bench.floor.map((t, i) => ({ ...t, directUpstreamUs: bench.direct[i].upstreamUs })),
    },
  ];
}

export function grpcUpstreamGoal(bench: GrpcUpstreamBench): Goal {
  const ratio = grpcRatio(bench);
  return {
    title: `10. a gRPC unary call through the gateway costs it <= ${GRPC_GOAL}x the upstream's own CPU`,
    detail: `${ratio.toFixed(2)}x (a bare node:http2 proxy: ${floorRatio(bench).toFixed(2)}x)`,
    met: ratio <= GRPC_GOAL,
  };
}
