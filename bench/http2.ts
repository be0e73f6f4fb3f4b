/**
 * @module bench/http2
 * `npm run bench -- http2`: one Gatehouse (`gatehouse start` from dist/, the
 * demo config with auth and a per-user rate limit in front of the
 * in-process api, as the `gatehouse` row) pinned to the server CPU, loaded
 * over HTTP/1.1 by wrk and over HTTP/2 with prior knowledge (h2c) by
 * h2load, from the load CPU, turn about in each round, the same requests in
 * flight (h2load: connections of 10 streams each). Its goal: HTTP/2 at
 * least 1.2x the requests a second per core of HTTP/1.1, that is the
 * requests a CPU second of the server's process (its own CPU time, read
 * from /proc, whoever else shares the core), as the median of the ratios
 * of the same rounds. Requests a second are shown beside.
 */
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { DEPLOYMENTS, DIST } from './harness/deployments';
import { runH2loadGet } from './harness/h2load';
import { LOAD_CPU, SERVER_CPU } from './harness/measure';
import {
  cpuMicros,
  identify,
  processTree,
  requireTools,
  startPinned,
  stopAll,
  track,
  waitUntilServing,
} from './harness/processes';
import type { Goal } from './harness/report';
import type { ResultRow } from './harness/results';
import { ALICE, apiAnswer, checkAnswers, MESSAGE_PATH } from './harness/selfcheck';
import type { Settings } from './harness/settings';
import { median } from './harness/stats';
import { runWrk } from './harness/wrk';

/** Streams each h2load connection keeps in flight. */
const STREAMS = 10;

/** One protocol in one round. */
interface Turn {
  reqPerSec: number;
  cpuUs: number;
  p99Ms: number;
}

export interface Http2Bench {
  h1: Turn[];
  h2: Turn[];
  connections: number;
}

/** GET of the message over h2c with alice's credentials: the status and the body. */
async function h2Get(port: number): Promise<{ status: number; body: Buffer }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    return await new Promise((resolve, reject) => {
      session.once('error', reject);
      const stream = session.request({ ':path': MESSAGE_PATH, authorization: ALICE });
      const chunks: Buffer[] = [];
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
      stream.on('error', reject);
    });
  } finally {
    session.close();
  }
}

/** Starts the deployment, checks both protocols' answers, and measures them in turn. */
export async function runHttp2Bench(settings: Settings): Promise<Http2Bench> {
  requireTools(['taskset', 'wrk', 'h2load']);
  const spec = DEPLOYMENTS.find((d) => d.key === 'gatehouse')!;
  const dir = mkdtempSync(join(os.tmpdir(), 'gatehouse-bench-h2-'));
  const built = await spec.build(
    {
      dir,
      logOf: () => (settings.accessLog === '/dev/null' ? '/dev/null' : join(settings.accessLog, 'gatehouse-h2.log')),
      upstreamPort: 0,
    },
    settings.limit,
  );
  const processes = built.processes.map((p) => startPinned(p, SERVER_CPU));
  const connections = Math.max(1, Math.round(settings.connections / STREAMS));
  try {
    for (const p of processes) await waitUntilServing(p);
    const pids = processes.map((p) => p.child.pid!);
    track(identify(processTree(pids)));
    const port = built.port;
    const expected = await apiAnswer(DIST, `127.0.0.1:${port}`);
    await checkAnswers(spec, port, expected);
    const h2 = await h2Get(port);
    if (h2.status !== 200 || !h2.body.equals(expected.body))
      throw new Error(
        `over HTTP/2 GET ${MESSAGE_PATH} must answer 200 with the api's bytes; got ${h2.status} ${h2.body.toString('utf8').slice(0, 200)}`,
      );

    const url = `http://127.0.0.1:${port}${MESSAGE_PATH}`;
    const overHttp1 = async (seconds: number) => {
      const r = await runWrk({ url, seconds, connections: settings.connections, cpu: LOAD_CPU, authorization: ALICE });
      if (r.statusErrors > 0) throw new Error(`HTTP/1.1: ${r.statusErrors} answers of status 400 or more`);
      return { requests: r.requests, p99Ms: r.p99Ms, reqPerSec: r.reqPerSec };
    };
    const overHttp2 = async (seconds: number) => {
      const load = { url, seconds, connections, streams: STREAMS, cpu: LOAD_CPU, headers: { authorization: ALICE } };
      const r = await runH2loadGet(load);
      if (r.errors > 0) throw new Error(`HTTP/2: ${r.errors} requests failed or answered 400 or more`);
      return { requests: r.count, p99Ms: r.p99Ms, reqPerSec: r.count / r.seconds };
    };
    const measure = async (run: typeof overHttp1): Promise<Turn> => {
      await run(settings.warmup);
      const tree = processTree(pids);
      const before = cpuMicros(tree);
      const peak = await run(settings.duration);
      const cpu = cpuMicros(tree) - before;
      if (peak.requests === 0) throw new Error(`no request answered in ${settings.duration} s`);
      return { reqPerSec: peak.reqPerSec, cpuUs: cpu / peak.requests, p99Ms: peak.p99Ms };
    };

    const result: Http2Bench = { h1: [], h2: [], connections };
    for (let round = 0; round < settings.rounds; round++) {
      // Turn about: neither protocol always goes first.
      const order = round % 2 === 0 ? (['h1', 'h2'] as const) : (['h2', 'h1'] as const);
      for (const protocol of order) {
        const turn = await measure(protocol === 'h1' ? overHttp1 : overHttp2);
        result[protocol].push(turn);
        process.stderr.write(
          `  round ${round + 1}/${settings.rounds} ${protocol === 'h1' ? 'HTTP/1.1' : 'HTTP/2'}: ${Math.round(turn.reqPerSec)} req/s, ${turn.cpuUs.toFixed(1)} µs CPU/req, p99 ${turn.p99Ms.toFixed(1)} ms; load average ${os.loadavg()[0].toFixed(1)}\n`,
        );
      }
    }
    return result;
  } finally {
    await stopAll(processes);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The medians of the same-round ratios of HTTP/2 to HTTP/1.1: in requests
 * a second, and in requests a CPU second (per core: HTTP/1.1's CPU a
 * request over HTTP/2's).
 */
export function http2Ratios(bench: Http2Bench): { reqPerSec: number; cpu: number } {
  const rounds = bench.h1.map((_, i) => i);
  return {
    reqPerSec: median(rounds.map((i) => bench.h2[i].reqPerSec / bench.h1[i].reqPerSec)),
    cpu: median(rounds.map((i) => bench.h1[i].cpuUs / bench.h2[i].cpuUs)),
  };
}

/** The table of the part. */
export function formatHttp2(bench: Http2Bench): string {
  const row = (name: string, turns: Turn[]) =>
    `| ${name} | ${Math.round(median(turns.map((t) => t.reqPerSec)))} | ${median(turns.map((t) => t.cpuUs)).toFixed(1)} | ${median(turns.map((t) => t.p99Ms)).toFixed(1)} |`;
  const ratios = http2Ratios(bench);
  return [
    '| protocol (load) | req/s | µs CPU/req | p99 ms |',
    '|---|---|---|---|',
    row('HTTP/1.1 (wrk)', bench.h1),
    row(`HTTP/2 h2c (h2load, ${bench.connections} connections x ${STREAMS} streams)`, bench.h2),
    '',
    `HTTP/2 ÷ HTTP/1.1, median of the same-round ratios: ${ratios.cpu.toFixed(2)} in req/s per core (requests a CPU second), ${ratios.reqPerSec.toFixed(2)} in req/s.`,
  ].join('\n');
}

/** The rows of the part's results file: medians over the rounds, the ratios, and each round's sample. */
export function http2Rows(bench: Http2Bench): ResultRow[] {
  const ratios = http2Ratios(bench);
  const row = (name: string, turns: Turn[], figures: Record<string, number> = {}): ResultRow => ({
    table: 'http2',
    row: name,
    figures: {
      'req/s': Math.round(median(turns.map((t) => t.reqPerSec))),
      'CPU µs/req': Math.round(median(turns.map((t) => t.cpuUs)) * 10) / 10,
      'p99 ms': Math.round(median(turns.map((t) => t.p99Ms)) * 100) / 100,
      ...figures,
    },
    rounds: turns.map((t) => ({ ...t })),
  });
  const rounded = (x: number) => Math.round(x * 1000) / 1000;
  return [
    row('HTTP/1.1 (wrk)', bench.h1),
    row('HTTP/2 h2c (h2load)', bench.h2, {
      'vs HTTP/1.1 per core': rounded(ratios.cpu),
      'vs HTTP/1.1': rounded(ratios.reqPerSec),
    }),
  ];
}

/** The goal of the part. */
export function http2Goal(bench: Http2Bench): Goal {
  const ratios = http2Ratios(bench);
  return {
    title: '7. HTTP/2 (h2c, h2load) >= 1.2x HTTP/1.1 (wrk), same job, in req/s per core',
    detail: `${ratios.cpu.toFixed(2)} in requests a CPU second (${ratios.reqPerSec.toFixed(2)} in req/s)`,
    met: ratios.cpu >= 1.2,
  };
}
