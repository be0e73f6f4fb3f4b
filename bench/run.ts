/**
 * @module bench/run
 * `npm run bench`: the HTTP benchmark of the gateway against a bare Koa app
 * and a plain upstream, then the gRPC rate-limit benchmark of
 * bench/ratelimit.ts. autocannon runs in this process; every server is a
 * child process of its own (bench/server.ts), killed at the end whatever
 * happens. Prints what each row is, its figures, its ratio and its target.
 *
 *   npm run bench                 both parts
 *   npm run bench -- http         the HTTP rows only
 *   npm run bench -- ratelimit    the gRPC rate-limit rows only
 *
 * BENCH_DURATION (seconds measured per row, default 5), BENCH_WARMUP (default
 * 1), BENCH_CONNECTIONS (default 32), BENCH_ROUNDS (default 1: with more, the
 * rows are measured in turn that many times and each keeps its best round),
 * BENCH_ACCESS_LOG (where the gateway writes its access log, default
 * /dev/null; `off` for none), BENCH_ROWS (only the rows of these names,
 * separated by |, besides the two baselines). Exits 1 when a target is missed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { ServerKind } from './server';

/** What every row asks for: bench/server.ts captures the same path for the fixed-answer servers. */
const MESSAGE_PATH = '/v1/messages/1';
const ALICE = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
const CONFIG_DIR = join(__dirname, '..', 'config');

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got '${raw}'`);
  return n;
}

const settings = {
  duration: envNumber('BENCH_DURATION', 5),
  warmup: envNumber('BENCH_WARMUP', 1),
  connections: envNumber('BENCH_CONNECTIONS', 32),
  rounds: Math.round(envNumber('BENCH_ROUNDS', 1)),
  accessLog: process.env.BENCH_ACCESS_LOG ?? '/dev/null',
  /** Only the rows of these names (separated by |), besides the baselines. */
  rows: (process.env.BENCH_ROWS ?? '').split('|').map((r) => r.trim()).filter(Boolean),
};

// ---------------------------------------------------------------------------
// Servers

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  /** The CPU time the server has used so far, in microseconds. */
  cpu(): Promise<number>;
}

const children = new Set<ChildProcess>();

/** Starts bench/server.ts as a child and resolves its URL once it is listening. */
function startServer(kind: ServerKind, arg?: string, accessLog = settings.accessLog): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'server.ts'), kind, ...(arg ? [arg] : [])], {
    // stdin stays open: the child exits when it closes, even if this process is killed.
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_ACCESS_LOG: accessLog },
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  // Answers to `cpu` questions, in order.
  const cpuAnswers: ((us: number) => void)[] = [];
  const cpu = () =>
    new Promise<number>((resolve) => {
      cpuAnswers.push(resolve);
      child.stdin!.write('cpu\n');
    });
  return new Promise((resolve, reject) => {
    let out = '';
    let listening = false;
    const timer = setTimeout(() => reject(new Error(`${kind} server did not start within 30 s`)), 30_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        const cpuLine = /^cpu (\d+)$/.exec(line);
        if (cpuLine) cpuAnswers.shift()?.(Number(cpuLine[1]));
        const match = /listening on (\S+)$/.exec(line);
        if (match && !listening) {
          listening = true;
          clearTimeout(timer);
          resolve({ url: match[1], child, cpu });
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${kind} server exited with ${code} before listening`));
    });
  });
}

/** Ends a child: closes its stdin, then kills it if it is still there after a moment. */
function stop(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin!.end();
  });
}

/** Ends every child. */
async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stop));
}

process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------
// Gateway configs

const AUTH_SERVICE = {
  apiVersion: 'gateway/v1',
  kind: 'AuthService',
  name: 'authentication',
  auth_service: 'auth',
  proto: 'http',
  allowed_authorization_headers: ['x-travel-user'],
};
const RATE_LIMIT_SERVICE = { apiVersion: 'gateway/v1', kind: 'RateLimitService', name: 'ratelimit', service: 'ratelimit', domain: 'gateway' };
/** A per-user limit no run reaches: every request is counted, none refused. */
const LIMITS = 'domain: gateway\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: second\n      requests_per_unit: 4000000000\n';
const PER_USER = { gateway: [{ request_label_group: [{ user: { header: 'x-travel-user' } }] }] };

/** A config folder: the demo users, the bench limits, the auth and rate-limit services and one Mapping of /v1/. */
function gatewayConfig(root: string, name: string, mapping: Record<string, unknown>): string {
  const dir = join(root, name);
  cpSync(join(CONFIG_DIR, 'users.htpasswd'), join(dir, 'users.htpasswd'));
  writeFileSync(join(dir, 'ratelimit.yaml'), LIMITS);
  const records = [AUTH_SERVICE, RATE_LIMIT_SERVICE, { apiVersion: 'gateway/v1', kind: 'Mapping', name, prefix: '/v1/', rewrite: '', ...mapping }];
  // JSON is YAML: one document per record.
  writeFileSync(join(dir, 'services.yaml'), records.map((r) => JSON.stringify(r)).join('\n---\n'));
  return dir;
}

// ---------------------------------------------------------------------------
// Rows

interface RowSpec {
  name: string;
  what: string;
  /**
   * Starts the row's server, which is stopped after the row unless it is
   * `shared`: an idle Gatehouse still wakes up (its event-loop-delay metric),
   * and would take CPU from the row being measured.
   */
  start(): Promise<Server>;
  shared?: boolean;
  headers?: Record<string, string>;
  /** Compared with the row of this name, which it should reach this share of. */
  target?: { of: string; ratio: number };
}

interface Measured {
  reqPerSec: number;
  p99Ms: number;
  /** CPU time the server used per request answered, in microseconds. */
  cpuUs: number;
}

async function load(url: string, seconds: number, headers?: Record<string, string>): Promise<autocannon.Result> {
  return autocannon({ url: `${url}${MESSAGE_PATH}`, connections: settings.connections, pipelining: 1, duration: seconds, headers });
}

async function measure(server: Server, row: RowSpec): Promise<Measured> {
  // One request first: a row that does not answer 200 measures nothing.
  const check = await fetch(`${server.url}${MESSAGE_PATH}`, { headers: row.headers });
  if (check.status !== 200) throw new Error(`${row.name}: GET ${MESSAGE_PATH} answered ${check.status}: ${await check.text()}`);
  await load(server.url, settings.warmup, row.headers);
  const cpuBefore = await server.cpu();
  const result = await load(server.url, settings.duration, row.headers);
  const cpuAfter = await server.cpu();
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${row.name}: ${result.errors} connection errors and ${result.non2xx} answers other than 2xx`);
  }
  return { reqPerSec: result['2xx'] / result.duration, p99Ms: result.latency.p99, cpuUs: (cpuAfter - cpuBefore) / result['2xx'] };
}

function pad(cells: string[][]): string {
  const widths = cells[0].map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  return cells.map((c) => c.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ').trimEnd()).join('\n');
}

const percent = (x: number) => `${Math.round(x * 100)}%`;

async function runHttpBench(): Promise<boolean> {
  const root = mkdtempSync(join(os.tmpdir(), 'gatehouse-bench-'));
  try {
    const upstream = await startServer('upstream');
    const allRows: RowSpec[] = [
      {
        name: 'bare koa',
        what: 'a bare Koa app answering the same JSON: the object the api module answers, serialised by Koa per request',
        start: () => startServer('bare-koa'),
      },
      {
        name: 'bare koa + access log',
        what: 'the bare Koa app behind the gateway\'s access log middleware alone (log line, request id, metrics): the least any gateway row pays',
        start: () => startServer('logged-koa'),
      },
      { name: 'api module alone', what: 'the api module on its own, no gateway (for reference: the work the API itself does)', start: () => startServer('api') },
      {
        name: 'gateway → in-process api',
        what: 'createGatehouse, a bypass_auth Mapping of /v1/ to the api module',
        start: () => startServer('gateway', gatewayConfig(root, 'open', { service: 'api', bypass_auth: true })),
        target: { of: 'bare koa', ratio: 0.85 },
      },
      {
        name: 'gateway → in-process api, auth (cached)',
        what: "the same through the in-process auth service with alice's credentials (verified once, then cached)",
        start: () => startServer('gateway', gatewayConfig(root, 'auth', { service: 'api' })),
        headers: { authorization: ALICE },
        target: { of: 'bare koa', ratio: 0.8 },
      },
      {
        name: 'gateway → in-process api, auth + rate limit',
        what: 'the same with a per-user descriptor asked of the in-process rate-limit service (memory store, a limit never reached)',
        start: () => startServer('gateway', gatewayConfig(root, 'limited', { service: 'api', labels: PER_USER })),
        headers: { authorization: ALICE },
        target: { of: 'bare koa', ratio: 0.7 },
      },
      // The same two paths without the access log, to show what it costs; the rows above are what `npm start` runs.
      ...(settings.accessLog === 'off'
        ? []
        : [
            {
              name: 'gateway → in-process api, access log off',
              what: 'the in-process api row with no access log (BENCH_ACCESS_LOG=off), for reference',
              start: () => startServer('gateway', gatewayConfig(root, 'open-quiet', { service: 'api', bypass_auth: true }), 'off'),
            },
            {
              name: 'gateway → in-process api, auth + rate limit, access log off',
              what: 'the auth + rate limit row with no access log, for reference',
              start: () => startServer('gateway', gatewayConfig(root, 'limited-quiet', { service: 'api', labels: PER_USER }), 'off'),
              headers: { authorization: ALICE },
            },
          ]),
      { name: 'upstream direct', what: 'a node:http server answering the same bytes', start: () => Promise.resolve(upstream), shared: true },
      {
        name: 'raw node:http proxy (undici), no koa',
        what: 'for reference: node:http in, an undici Pool out, nothing else (no Koa, routing or log): the floor of any Node.js proxy on this machine',
        start: () => startServer('raw-proxy', upstream.url),
      },
      {
        name: 'gateway → remote upstream (proxy)',
        what: 'a bypass_auth Mapping of /v1/ to that upstream at its address',
        start: () => startServer('gateway', gatewayConfig(root, 'proxy', { service: new URL(upstream.url).host, bypass_auth: true })),
        target: { of: 'upstream direct', ratio: 0.4 },
      },
    ];
    const baselines = ['bare koa', 'upstream direct'];
    const rows = allRows.filter(
      (r) => settings.rows.length === 0 || baselines.includes(r.name) || settings.rows.includes(r.name),
    );

    console.log(
      [
        `HTTP: GET ${MESSAGE_PATH}, autocannon in this process (${settings.connections} connections, pipelining 1), every server a child process;`,
        `each row ${settings.warmup} s of warm-up, then ${settings.duration} s measured (BENCH_DURATION)${settings.rounds > 1 ? `, best of ${settings.rounds} rounds` : ''}.`,
        `Gateway rows: createGatehouse as npm start builds it, access log ${
          settings.accessLog === 'off' ? 'off (BENCH_ACCESS_LOG=off)' : `on at ${process.env.LOG_LEVEL ?? 'info'}, written to ${settings.accessLog}`
        } (but in the rows marked access log off), metrics on.`,
        '',
        ...rows.map((r) => `  ${r.name}: ${r.what}`),
        '',
        'CPU µs/req: the CPU time the server process used per answer (the proxy alone in the proxy rows). It varies less',
        'than req/s when other work shares the machine; with few CPUs the load generator competes with the server for them.',
        '',
        `Targets: ${rows
          .filter((r) => r.target)
          .map((r) => `${r.name.replace(/^gateway → /, '')} >= ${percent(r.target!.ratio)} of ${r.target!.of}`)
          .join('; ')}.`,
        '',
      ].join('\n'),
    );

    const best = new Map<string, Measured>();
    for (let round = 0; round < settings.rounds; round++) {
      for (let i = 0; i < rows.length; i++) {
        const server = await rows[i].start();
        const m = await measure(server, rows[i]);
        if (!rows[i].shared) await stop(server.child);
        const b = best.get(rows[i].name);
        if (!b || m.reqPerSec > b.reqPerSec) best.set(rows[i].name, m);
        const of = settings.rounds > 1 ? ` (round ${round + 1} of ${settings.rounds})` : '';
        process.stderr.write(`  measured ${rows[i].name}${of}: ${Math.round(m.reqPerSec)} req/s, ${m.cpuUs.toFixed(0)} µs CPU/req\n`);
      }
    }

    const bare = best.get('bare koa')!;
    const direct = best.get('upstream direct')!;
    const table = [['row', 'req/s', 'p99 ms', 'CPU µs/req', 'vs bare koa', 'vs direct', 'target', '']];
    let allMet = true;
    for (const row of rows) {
      const m = best.get(row.name)!;
      let verdict = '';
      let target = '';
      if (row.target) {
        const ratio = m.reqPerSec / best.get(row.target.of)!.reqPerSec;
        const met = ratio >= row.target.ratio;
        allMet &&= met;
        verdict = met ? 'PASS' : 'FAIL';
        target = `>= ${percent(row.target.ratio)} of ${row.target.of === 'bare koa' ? 'bare' : 'direct'}`;
      }
      table.push([
        row.name,
        String(Math.round(m.reqPerSec)),
        m.p99Ms.toFixed(1),
        m.cpuUs.toFixed(0),
        percent(m.reqPerSec / bare.reqPerSec),
        row.name.includes('upstream') || row.name.includes('proxy') ? percent(m.reqPerSec / direct.reqPerSec) : '',
        target,
        verdict,
      ]);
    }
    console.log(pad(table));
    return allMet;
  } finally {
    await stopAll();
    rmSync(root, { recursive: true, force: true });
  }
}

async function runGrpcBench(): Promise<boolean> {
  console.log(
    [
      '',
      'gRPC rate limits (bench/ratelimit.ts): ShouldRateLimit on the envoy v3 service, the load from a child process,',
      `an empty grpc-js handler as the baseline. Targets: memory store >= 85% of the empty handler, Redis >= 60%.`,
      '',
    ].join('\n'),
  );
  // Loaded only now: the HTTP rows' load generator runs in this process, and is best kept lean.
  const { formatRows, runRateLimitBench } = require('./ratelimit') as typeof import('./ratelimit');
  const rows = await runRateLimitBench();
  const lines = formatRows(rows).split('\n');
  let allMet = true;
  console.log(
    lines
      .map((line, i) => {
        const row = rows[i - 1];
        if (!row || row.target === undefined) return line;
        const met = row.ratio >= row.target;
        allMet &&= met;
        return `${line}  ${met ? 'PASS' : 'FAIL'}`;
      })
      .join('\n'),
  );
  console.log('\nBursts through Redis (bench/ratelimit-bursts.ts): exact answers, 0 errors, p99 under a burst <= 2x the empty handler\'s.\n');
  const { burstTargetsMet, formatBurstBench, runBurstBench } = require('./ratelimit-bursts') as typeof import('./ratelimit-bursts');
  const bursts = await runBurstBench();
  const met = burstTargetsMet(bursts);
  console.log(`${formatBurstBench(bursts)}\n${met ? 'PASS' : 'FAIL'}: bursts`);
  return allMet && met;
}

async function main(parts: string[]): Promise<number> {
  const known = ['http', 'ratelimit'];
  const unknown = parts.filter((p) => !known.includes(p));
  if (unknown.length) throw new Error(`unknown part ${unknown.join(', ')}; parts: ${known.join(', ')}`);
  const run = parts.length ? parts : known;
  const [load1] = os.loadavg();
  console.log(`Gatehouse benchmark — node ${process.version}, ${os.cpus().length} CPUs, load average ${load1.toFixed(2)} at start\n`);
  let ok = true;
  if (run.includes('http')) ok = (await runHttpBench()) && ok;
  if (run.includes('ratelimit')) ok = (await runGrpcBench()) && ok;
  console.log(`\nload average ${os.loadavg()[0].toFixed(2)} at the end`);
  if (!ok) console.log('A target was missed (FAIL above). Figures vary with the load of the machine: run again when it is idle (BENCH_ROUNDS=3 keeps the best of three).');
  return ok ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    await stopAll();
    console.error(err);
    process.exitCode = 1;
  },
);
