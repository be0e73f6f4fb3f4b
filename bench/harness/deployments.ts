/**
 * @module bench/harness/deployments
 * Every deployment the HTTP benchmark measures: what it is, which processes
 * it runs (each pinned to the server CPU), what a correct answer from it is.
 * The peers are small files in bench/peers/, run by plain node; Gatehouse
 * runs from the compiled dist/ as `gatehouse start` and `gatehouse serve`.
 */
import { join } from 'node:path';
import { freePort } from '../../test/support/ports';
import {
  writeGatehouseConfig,
  writeHaproxyConfig,
  writeNginxAuthConfig,
  writeNginxProxyConfig,
  type GatehouseVariant,
} from './configs';
import type { ProcessSpec } from './processes';

const ROOT = join(__dirname, '..', '..');
const PEERS = join(ROOT, 'bench', 'peers');
export const DIST = join(ROOT, 'dist');
const USERS_FILE = join(ROOT, 'config', 'users.htpasswd');

/** The rows of the first table (what the gateway does in-process) and of the second (a hop to a remote upstream). */
export type Group = 'same-job' | 'proxy';

/** Where an instance of a deployment keeps its files and writes its logs. */
export interface BuildContext {
  /** A folder of its own. */
  dir: string;
  /** Where the standard output of its process `name` goes: the access-log destination. */
  logOf(name: string): string;
  /** The port of the upstream every proxy row forwards to. */
  upstreamPort: number;
  /** The dist/ of another build of Gatehouse (BENCH_BASELINE), for the rows that run it. */
  baselineDist?: string;
  /** The dist/ Gatehouse runs from: this checkout's when absent. */
  dist?: string;
}

export interface Built {
  /** The port the load goes to. */
  port: number;
  processes: ProcessSpec[];
}

export interface DeploymentSpec {
  /** Its name in BENCH_ROWS. */
  key: string;
  /** Its row in the tables. */
  name: string;
  group: Group;
  what: string;
  /** Asks for Basic credentials (alice's are sent); none is a 401. */
  auth: boolean;
  /** Counts the requests of each user: past the limit a minute, a 429. */
  limited: boolean;
  /** Stands in front of the shared upstream, which runs while it is measured. */
  proxied: boolean;
  /** Runs the other build of BENCH_BASELINE: measured only when one is given. */
  baseline?: true;
  /** Its processes, for a limit of `perUserLimit` requests a minute per user. */
  build(ctx: BuildContext, perUserLimit: number): Promise<Built>;
}

/**
 * Whether the tables give Gatehouse's ratio to this row ("Gatehouse vs
 * it"): every peer and the other build of BENCH_BASELINE, not the
 * variants of this build.
 */
export function comparedWithGatehouse(spec: DeploymentSpec): boolean {
  return spec.baseline === true || !spec.key.startsWith('gatehouse');
}

/** The environment of every node process: production, none of the variables that would change what Gatehouse does. */
function nodeEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', ...extra };
  for (const name of [
    'HOST',
    'PORT',
    'GRPC_PORT',
    'GATEHOUSE_CONFIG',
    'REDIS_URL',
    'DATABASE_URL',
    'GATEHOUSE_DATA',
    'TLS_CERT',
    'TLS_KEY',
    'LOG_LEVEL',
    'NODE_OPTIONS',
  ]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

function peer(ctx: BuildContext, file: string, port: number, env: Record<string, string> = {}): ProcessSpec {
  return {
    name: file,
    command: process.execPath,
    args: [join(PEERS, file)],
    env: nodeEnv({ PORT: String(port), HOST: '127.0.0.1', ...env }),
    stdout: ctx.logOf(file),
    port,
  };
}

function gatehouseCommand(ctx: BuildContext, name: string, args: string[], port: number): ProcessSpec {
  return {
    name,
    command: process.execPath,
    args: [join(ctx.dist ?? DIST, 'cli', 'main.js'), ...args],
    env: nodeEnv({ LOG_LEVEL: 'info' }),
    stdout: ctx.logOf(name),
    port,
  };
}

/** `gatehouse start` (what npm start runs) on the demo's config, its /v1 Mapping changed for the row. */
async function gatehouse(ctx: BuildContext, variant: GatehouseVariant, perUserLimit: number): Promise<Built> {
  const config = writeGatehouseConfig(join(ctx.dir, 'config'), variant, perUserLimit);
  const port = await freePort();
  const args = ['start', '--config', config, '--host', '127.0.0.1', '--port', String(port), '--grpc-port', '0'];
  // Its bookings database opens after it listens, for seconds of the same CPU: measured before, a turn would measure that.
  const process = { ...gatehouseCommand(ctx, 'gatehouse', args, port), readyPath: '/gateway/v0/check_ready' };
  return { port, processes: [process] };
}

/**
 * `spec`, run from the other build BENCH_BASELINE gives: the same config,
 * load and checks, so that the two rows differ in the build alone.
 */
function onBaseline(spec: DeploymentSpec, name: string): DeploymentSpec {
  return {
    ...spec,
    key: `${spec.key}-baseline`,
    name,
    what: `the ${spec.key} row, run from the dist/ of the checkout BENCH_BASELINE names`,
    baseline: true,
    build(ctx, perUserLimit) {
      if (ctx.baselineDist === undefined) throw new Error('a baseline row is measured only with BENCH_BASELINE');
      return spec.build({ ...ctx, dist: ctx.baselineDist }, perUserLimit);
    },
  };
}

async function onePeer(ctx: BuildContext, file: string, env: Record<string, string> = {}): Promise<Built> {
  const port = await freePort();
  return { port, processes: [peer(ctx, file, port, env)] };
}

function nginx(ctx: BuildContext, config: string, port: number): ProcessSpec {
  return {
    name: 'nginx',
    command: 'nginx',
    args: ['-p', ctx.dir, '-c', config, '-e', join(ctx.dir, 'nginx-error.log')],
    port,
  };
}

const upstreamUrl = (ctx: BuildContext) => `http://127.0.0.1:${ctx.upstreamPort}`;

/** Gatehouse doing the job of the hand-written stacks: auth, a rate limit, the in-process api. */
const SAME_JOB: DeploymentSpec = {
  key: 'gatehouse',
  name: 'Gatehouse: + auth + rate limit (same job)',
  group: 'same-job',
  what: 'the same, and a per-user descriptor to the in-process rate-limit service (memory store)',
  auth: true,
  limited: true,
  proxied: false,
  build: (ctx, limit) => gatehouse(ctx, { kind: 'auth-limit' }, limit),
};

/** Gatehouse as a hop to the shared upstream. */
const PROXY: DeploymentSpec = {
  key: 'gatehouse-proxy',
  name: 'Gatehouse',
  group: 'proxy',
  what: 'gatehouse start on the demo config, the /v1 Mapping to the upstream at its address, bypass_auth',
  auth: false,
  limited: false,
  proxied: true,
  build: (ctx, limit) => gatehouse(ctx, { kind: 'proxy', upstream: `127.0.0.1:${ctx.upstreamPort}` }, limit),
};

/** The shared upstream of the proxy rows, started once. */
export const UPSTREAM_KEY = 'upstream';

export const DEPLOYMENTS: readonly DeploymentSpec[] = [
  {
    key: 'raw-http',
    name: 'raw node:http',
    group: 'same-job',
    what: 'node:http alone answering the message: no framework, auth, limit or log',
    auth: false,
    limited: false,
    proxied: false,
    build: (ctx) => onePeer(ctx, 'raw-http.js'),
  },
  {
    key: 'bare-koa',
    name: 'bare Koa 3',
    group: 'same-job',
    what: 'Koa 3 and one middleware answering the message: the baseline of this table',
    auth: false,
    limited: false,
    proxied: false,
    build: (ctx) => onePeer(ctx, 'bare-koa.js'),
  },
  {
    key: 'fastify',
    name: 'fastify + basic-auth + rate-limit (same job)',
    group: 'same-job',
    what: 'fastify 5, @fastify/basic-auth (bcrypt results cached by header, 60 s), @fastify/rate-limit per user in memory, a response schema; no logger (its default)',
    auth: true,
    limited: true,
    proxied: false,
    build: (ctx, limit) => onePeer(ctx, 'fastify-stack.js', { USERS_FILE, RATE_LIMIT: String(limit) }),
  },
  {
    key: 'koa-stack',
    name: 'hand-written Koa + pino log (same job)',
    group: 'same-job',
    what: 'Koa 3, koa-router, Basic auth (bcrypt results cached by header, 60 s), an in-memory counter per user and minute, a pino access line per request',
    auth: true,
    limited: true,
    proxied: false,
    build: (ctx, limit) => onePeer(ctx, 'koa-stack.js', { USERS_FILE, RATE_LIMIT: String(limit) }),
  },
  {
    key: 'koa-answer',
    name: "hand-written Koa, Gatehouse's answer",
    group: 'same-job',
    what: 'the hand-written Koa stack answering as the gateway does: a request id, the credentials cache keyed by a secret-prefixed SHA-256 of the header, RateLimit headers, Vary: Accept, the access log fields',
    auth: true,
    limited: true,
    proxied: false,
    build: (ctx, limit) => onePeer(ctx, 'koa-answer.js', { USERS_FILE, RATE_LIMIT: String(limit) }),
  },
  {
    key: 'gatehouse-api',
    name: 'Gatehouse: in-process api',
    group: 'same-job',
    what: 'gatehouse start on the demo config: the /v1 Mapping to the api module, bypass_auth',
    auth: false,
    limited: false,
    proxied: false,
    build: (ctx, limit) => gatehouse(ctx, { kind: 'open' }, limit),
  },
  {
    key: 'gatehouse-auth',
    name: 'Gatehouse: + cached auth',
    group: 'same-job',
    what: 'the same, through the in-process auth service (credentials verified once, then cached)',
    auth: true,
    limited: false,
    proxied: false,
    build: (ctx, limit) => gatehouse(ctx, { kind: 'auth' }, limit),
  },
  SAME_JOB,
  onBaseline(SAME_JOB, 'the same, BENCH_BASELINE build'),
  {
    key: 'seed',
    name: 'nginx auth_request → auth → api',
    group: 'same-job',
    what: "the seed's deployment as processes: nginx (auth_request, kept-alive upstreams), gatehouse serve auth, gatehouse serve api",
    auth: true,
    limited: false,
    proxied: false,
    async build(ctx) {
      const ports = { nginx: await freePort(), auth: await freePort(), api: await freePort() };
      const config = writeNginxAuthConfig(ctx.dir, ctx.logOf('nginx'), ports);
      const configDir = writeGatehouseConfig(join(ctx.dir, 'config'), { kind: 'auth' }, 60);
      return {
        port: ports.nginx,
        processes: [
          gatehouseCommand(
            ctx,
            'gatehouse serve auth',
            ['serve', 'auth', '--config', configDir, '--port', String(ports.auth)],
            ports.auth,
          ),
          gatehouseCommand(ctx, 'gatehouse serve api', ['serve', 'api', '--port', String(ports.api)], ports.api),
          nginx(ctx, config, ports.nginx),
        ],
      };
    },
  },
  {
    key: UPSTREAM_KEY,
    name: 'upstream direct',
    group: 'proxy',
    what: 'the upstream itself: node:http answering the bytes made at start; the baseline of this table',
    auth: false,
    limited: false,
    proxied: false,
    async build(ctx) {
      return { port: ctx.upstreamPort, processes: [peer(ctx, 'upstream.js', ctx.upstreamPort)] };
    },
  },
  {
    key: 'haproxy',
    name: 'HAProxy',
    group: 'proxy',
    what: 'HAProxy, one thread, an httplog line per request',
    auth: false,
    limited: false,
    proxied: true,
    async build(ctx) {
      const port = await freePort();
      const config = writeHaproxyConfig(ctx.dir, { haproxy: port, upstream: ctx.upstreamPort });
      return {
        port,
        processes: [
          { name: 'haproxy', command: 'haproxy', args: ['-db', '-f', config], stdout: ctx.logOf('haproxy'), port },
        ],
      };
    },
  },
  {
    key: 'nginx',
    name: 'nginx',
    group: 'proxy',
    what: 'nginx, one worker, kept-alive upstream, its access log',
    auth: false,
    limited: false,
    proxied: true,
    async build(ctx) {
      const port = await freePort();
      const config = writeNginxProxyConfig(ctx.dir, ctx.logOf('nginx'), { nginx: port, upstream: ctx.upstreamPort });
      return { port, processes: [nginx(ctx, config, port)] };
    },
  },
  {
    key: 'undici',
    name: 'node:http + undici Pool',
    group: 'proxy',
    what: 'node:http in, an undici Pool out, the answer piped back: no routing, no log',
    auth: false,
    limited: false,
    proxied: true,
    build: (ctx) => onePeer(ctx, 'undici-forwarder.js', { UPSTREAM: upstreamUrl(ctx) }),
  },
  {
    key: 'undici-answer',
    name: "node:http + undici, Gatehouse's answer",
    group: 'proxy',
    what: "the same forwarder answering as the gateway does: a request id both ways, X-Forwarded-* and Forwarded, the upstream's Host, Connection-nominated headers dropped, a pino line with the access log fields",
    auth: false,
    limited: false,
    proxied: true,
    build: (ctx) => onePeer(ctx, 'undici-answer.js', { UPSTREAM: upstreamUrl(ctx) }),
  },
  {
    key: 'fastify-proxy',
    name: '@fastify/http-proxy',
    group: 'proxy',
    what: 'fastify 5 and @fastify/http-proxy on /v1; no logger (its default)',
    auth: false,
    limited: false,
    proxied: true,
    build: (ctx) => onePeer(ctx, 'fastify-proxy.js', { UPSTREAM: upstreamUrl(ctx) }),
  },
  PROXY,
  onBaseline(PROXY, 'Gatehouse, BENCH_BASELINE build'),
];
