/**
 * @module bench/server
 * One server of the HTTP benchmark, run as a child process so that the load
 * generator and the server do not share an event loop:
 *
 *   node --import tsx bench/server.ts bare-koa
 *   node --import tsx bench/server.ts logged-koa
 *   node --import tsx bench/server.ts upstream
 *   node --import tsx bench/server.ts api
 *   node --import tsx bench/server.ts gateway <config folder>
 *   node --import tsx bench/server.ts raw-proxy <upstream URL>
 *
 * Prints `<kind> listening on http://127.0.0.1:<port>` once it answers,
 * answers a line `cpu` on its standard input with the CPU time it has used,
 * and exits when its standard input closes (the benchmark ended or died).
 *
 * `bare-koa` and `upstream` answer every request with what the api module
 * answers to GET /v1/messages/1 (asked once, for the port they listen on), so
 * that every row moves the same payload: `upstream` sends those bytes, and
 * `bare-koa` the parsed object, which Koa serialises per request as it does
 * for any app answering JSON. `logged-koa` is `bare-koa` behind the
 * gateway's access log middleware alone (log line, request id, metrics): the
 * least any logged route costs. The gateway logs its access
 * log at LOG_LEVEL (default info) to BENCH_ACCESS_LOG (default /dev/null;
 * `off` for none), as a deployment writing its log would.
 *
 * `raw-proxy` is the least a Node.js proxy can be: node:http in, a keep-alive
 * undici Pool out (as the gateway's), the upstream's answer piped back, and
 * nothing else: no Koa, no routing, no log. It measures the floor under the
 * gateway's proxy row on the same machine.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import Koa from 'koa';
import { Pool, type Dispatcher } from 'undici';
import { createApiModule } from '../src/api';
import { createGatehouse } from '../src/gatehouse';
import { accessLog, createLogger, createMetrics, createRouteCounters, logDestination, type Logger } from '../src/telemetry';

/** The path every row asks for. */
export const MESSAGE_PATH = '/v1/messages/1';

/** The server kinds this file runs. */
export const SERVER_KINDS = ['bare-koa', 'logged-koa', 'upstream', 'api', 'gateway', 'raw-proxy'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

interface Captured {
  body: Buffer;
  contentType: string;
}

async function listening(server: http.Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** What the api module answers to GET /v1/messages/1 with `Host: 127.0.0.1:<port>`. */
async function captureMessage(port: number): Promise<Captured> {
  const api = http.createServer(createApiModule({ proxy: false }).app!.callback());
  const apiPort = await listening(api);
  try {
    return await new Promise<Captured>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: apiPort, path: MESSAGE_PATH, headers: { host: `127.0.0.1:${port}` } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`the api module answered ${res.statusCode}`));
          else resolve({ body: Buffer.concat(chunks), contentType: String(res.headers['content-type']) });
        });
      });
      req.on('error', reject);
    });
  } finally {
    api.close();
  }
}

/** A server whose handler is set once the message is captured for its own port. */
async function fixedAnswerServer(kind: 'bare-koa' | 'logged-koa' | 'upstream'): Promise<number> {
  let handler: http.RequestListener = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = http.createServer((req, res) => handler(req, res));
  const port = await listening(server);
  const { body, contentType } = await captureMessage(port);
  if (kind === 'bare-koa' || kind === 'logged-koa') {
    // A bare Koa app answering JSON serialises its object on every request.
    const message: unknown = JSON.parse(body.toString('utf8'));
    const app = new Koa();
    if (kind === 'logged-koa') app.use(accessLog({ logger: benchLogger(), metrics: createMetrics(), counters: createRouteCounters() }));
    app.use((ctx) => {
      ctx.body = message;
    });
    handler = app.callback();
  } else {
    const length = String(body.length);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': contentType, 'content-length': length });
      res.end(body);
    };
  }
  return port;
}

async function apiServer(): Promise<number> {
  return listening(http.createServer(createApiModule({ proxy: false }).app!.callback()));
}

/** Hop-by-hop headers (RFC 9110 §7.6.1), which a proxy does not pass on. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

async function rawProxyServer(upstream: string): Promise<number> {
  const pool = new Pool(upstream, { connections: 128, keepAliveTimeout: 4_000 });
  return listening(
    http.createServer((req, res) => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'host') headers[name] = value;
      }
      pool.request({ method: req.method as Dispatcher.HttpMethod, path: req.url ?? '/', headers }).then(
        ({ statusCode, headers: answered, body }) => {
          for (const [name, value] of Object.entries(answered)) {
            if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
          }
          res.statusCode = statusCode;
          pipeline(body, res, () => undefined);
        },
        () => {
          res.statusCode = 502;
          res.end();
        },
      );
    }),
  );
}

/** The logger of the gateway rows: to BENCH_ACCESS_LOG, as the default destination writes (in chunks). */
function benchLogger(): Logger {
  const target = process.env.BENCH_ACCESS_LOG ?? '/dev/null';
  return target === 'off' ? createLogger({ level: 'silent' }) : createLogger({ destination: logDestination(target) });
}

async function gatewayServer(configDir: string): Promise<{ port: number; stop(): Promise<void> }> {
  const logger = benchLogger();
  const gatehouse = await createGatehouse({ configDir, port: 0, grpcPort: false, watch: false, logger });
  const { port } = await gatehouse.start();
  return { port, stop: () => gatehouse.stop() };
}

async function main(kind: string, arg: string | undefined): Promise<void> {
  let port: number;
  switch (kind) {
    case 'bare-koa':
    case 'logged-koa':
    case 'upstream':
      port = await fixedAnswerServer(kind);
      break;
    case 'api':
      port = await apiServer();
      break;
    case 'gateway':
      if (!arg) throw new Error('gateway needs a config folder');
      port = (await gatewayServer(arg)).port;
      break;
    case 'raw-proxy':
      if (!arg) throw new Error('raw-proxy needs the upstream URL');
      port = await rawProxyServer(arg);
      break;
    default:
      throw new Error(`unknown server kind '${kind}'; kinds: ${SERVER_KINDS.join(', ')}`);
  }
  // The benchmark holds our standard input open; when it goes, so do we. A
  // line `cpu` asks for the CPU time used so far: `cpu <microseconds>`.
  let input = '';
  process.stdin.setEncoding('utf8').on('data', (chunk: string) => {
    input += chunk;
    let nl: number;
    while ((nl = input.indexOf('\n')) >= 0) {
      const line = input.slice(0, nl);
      input = input.slice(nl + 1);
      if (line === 'cpu') {
        const { user, system } = process.cpuUsage();
        process.stdout.write(`cpu ${user + system}\n`);
      }
    }
  });
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdout.write(`${kind} listening on http://127.0.0.1:${port}\n`);
}

if (require.main === module) {
  main(process.argv[2], process.argv[3]).catch((err: unknown) => {
    process.stderr.write(`bench server: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
