/**
 * @module gatehouse/options
 * The options of a whole Gatehouse and their defaults, from code or from the
 * environment (`HOST`, `PORT`, `GRPC_PORT`, `GATEHOUSE_CONFIG`, `REDIS_URL`,
 * `DATABASE_URL`, `GATEHOUSE_DATA`, `TLS_CERT`, `TLS_KEY`, `GATEHOUSE_CLUSTER_DOMAIN`,
 * `DRAIN_DELAY_MS`, `GRPC_MAX_MESSAGE_BYTES`, `GRPC_MAX_CONNECTIONS`,
 * `GRPC_REQUEST_TIMEOUT_MS`, `MAX_DESCRIPTOR_ENTRIES`,
 * `BODY_LIMIT`, `TRUST_PROXY`, `SHUTDOWN_GRACE_MS`, `KEEP_ALIVE_TIMEOUT_MS`,
 * `GATEHOUSE_FILE_SIZE_LIMIT`).
 */
import { dirname, join, resolve } from 'node:path';
import { checkDatabaseUrl, DEFAULT_DATABASE_TIMEOUT_MS } from '../bookings';
import { DEFAULT_FILE_SIZE_LIMIT, fileSystemSource, parseByteSize, type ConfigFileSource } from '../files';
import type { Logger } from '../telemetry';
import type { GatehouseModule } from '../gateway';
import { MAX_CONNECTIONS, MAX_DESCRIPTOR_ENTRIES, MAX_MESSAGE_BYTES, REQUEST_TIMEOUT_MS } from '../ratelimit';
import { DRAIN_DELAY_MS, KEEP_ALIVE_TIMEOUT_MS } from './serving/http-server';
import type { TlsFiles } from './serving/tls-files';

export interface GatehouseOptions {
  /** The config folder. Default `GATEHOUSE_CONFIG`, else `./config`. */
  configDir?: string;
  /** HTTP listen address. Default `HOST`, else 127.0.0.1. */
  host?: string;
  /** HTTP port; 0 picks a free one. Default `PORT`, else 8080. */
  port?: number;
  /** gRPC listen address of the rate-limit service. Default: `host`. */
  grpcHost?: string;
  /** gRPC port; 0 picks a free one, `false` runs no gRPC server. Default `GRPC_PORT`, else 8081. */
  grpcPort?: number | false;
  /** Redis for the rate-limit counters (`redis://host:port`). Default `REDIS_URL`; without it, memory. */
  redisUrl?: string;
  /**
   * PostgreSQL for the bookings (`postgres://user:password@host:5432/database`),
   * shared by every process pointed at it. Default `DATABASE_URL`; without it,
   * PGlite in `dataDir`.
   */
  databaseUrl?: string;
  /** PGlite's folder for the bookings, made on the first start. Default `GATEHOUSE_DATA`, else `data` beside the config folder. */
  dataDir?: string;
  /**
   * Where bookings are kept: `database` (PostgreSQL or PGlite, as above) or
   * `memory` (gone on restart: for tests and embedding). Default `database`.
   */
  bookingStore?: 'database' | 'memory';
  /** How long a call to the bookings database may take before the request is answered 503, in ms. Default `DATABASE_TIMEOUT_MS`, else 5000. */
  databaseTimeoutMs?: number;
  /** Serve HTTPS with these files. Default from `TLS_CERT` and `TLS_KEY` when both are set. */
  tls?: TlsFiles;
  /** Modules of an embedding app, routable by name like the built-in ones (a same-named one replaces the built-in). */
  modules?: readonly GatehouseModule[];
  /** The domain part of the `<domain>/config` annotation. Default `gatehouse.io`. */
  annotationDomain?: string;
  /** This gateway's `ambassador_id`: it serves the records that name it, or name none (`default`). Default `AMBASSADOR_ID`, else `default`. */
  ambassadorId?: string;
  /** Largest request body in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /** Kubernetes' cluster domain: a service `quote.shop` is looked up as `quote.shop.svc.<domain>` first. Default `GATEHOUSE_CLUSTER_DOMAIN`, else `cluster.local`. */
  clusterDomain?: string;
  /** The largest request body a Mapping with `retry_policy` keeps to send again; a longer one streams and is not retried. Default 1 MiB. */
  retryBufferBytes?: number;
  /** Trust `X-Forwarded-*` from clients (Gatehouse sits behind another proxy). Default false. */
  trustProxy?: boolean;
  /** The value of `source_cluster` rate-limit labels (Envoy's `--service-cluster`). Default `gatehouse`. */
  sourceCluster?: string;
  /** Watch the config folder and the TLS files, and apply changes. Default true once `start()` is called. */
  watch?: boolean;
  /** How long after the last change in the folder a reload starts, in ms. Default 200. */
  reloadDebounceMs?: number;
  /** How long `stop()` lets requests in flight finish, in ms. Default 10 s. */
  shutdownGraceMs?: number;
  /**
   * How long `stop()` keeps serving before it closes the ports, in ms, while
   * `/gateway/v0/check_ready` and gRPC health say it is going and every
   * answer closes its connection: the time a load balancer (or Kubernetes)
   * takes to stop sending it requests. Default `DRAIN_DELAY_MS`, else 5 s; 0
   * closes at once.
   */
  drainDelayMs?: number;
  /** Largest gRPC message a rate-limit call may send, in bytes. Default `GRPC_MAX_MESSAGE_BYTES`, else 64 KiB. */
  grpcMaxMessageBytes?: number;
  /** Most connections open at once on the gRPC port; one more is closed as it comes. Default `GRPC_MAX_CONNECTIONS`, else 4096. */
  grpcMaxConnections?: number;
  /**
   * How long a rate-limit call's request may take to arrive whole, in ms; past
   * it the call is answered DEADLINE_EXCEEDED and counts nothing. Default
   * `GRPC_REQUEST_TIMEOUT_MS`, else 10 s.
   */
  grpcRequestTimeoutMs?: number;
  /** Most entries in one descriptor of a rate-limit request. Default `MAX_DESCRIPTOR_ENTRIES`, else 64. */
  maxDescriptorEntries?: number;
  /**
   * How long an idle keep-alive connection is kept, in ms. Default 65 s: longer
   * than a load balancer in front keeps its own (AWS ALB, nginx: 60 s); behind
   * one that keeps them longer (Google's: 600 s), set it longer still.
   */
  keepAliveTimeoutMs?: number;
  /** The logger; default pino on stdout at `LOG_LEVEL` (info). */
  logger?: Logger;
  /**
   * The largest file read from the config folder (records, limits, users,
   * booking data) and of the TLS files, in bytes; a larger one is refused
   * with its name. Default `GATEHOUSE_FILE_SIZE_LIMIT`, else 8 MiB.
   */
  fileSizeLimit?: number;
  /**
   * Where the config folder's files are read from, at start and at every
   * reload. Default: the file system. An embedding app may read them from a
   * store of its own, or wrap the file system (to audit, to test faults).
   */
  configSource?: ConfigFileSource;
}

/** Options with every default applied. */
export interface ResolvedOptions extends Required<
  Omit<GatehouseOptions, 'redisUrl' | 'databaseUrl' | 'tls' | 'logger' | 'grpcPort' | 'sourceCluster'>
> {
  sourceCluster?: string;
  grpcPort: number | false;
  redisUrl?: string;
  databaseUrl?: string;
  tls?: TlsFiles;
  logger?: Logger;
}

/**
 * A port from the environment variable `name` holding `value`; `fallback`
 * when it is unset or empty. Throws, naming the variable, for anything but
 * a whole number from 0 to 65535.
 */
export function envPort(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  // Digits only: Number() would also take `0x1F90`, `1e3` or ` 80`.
  const n = /^[0-9]{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(n <= 65535)) throw new Error(`${name} must be a port number (0-65535), got '${value}'`);
  return n;
}

/** The file size limit `GATEHOUSE_FILE_SIZE_LIMIT` sets (`16m`, `16777216`); the default when unset or empty. */
export function envFileSizeLimit(value: string | undefined): number {
  return envByteSize(value, 'GATEHOUSE_FILE_SIZE_LIMIT', DEFAULT_FILE_SIZE_LIMIT);
}

/** A byte size from the environment variable `name` (`1m`, `1048576`); `fallback` when it is unset or empty. */
export function envByteSize(value: string | undefined, name: string, fallback: number): number {
  return value === undefined || value === '' ? fallback : parseByteSize(value, name);
}

/** `true` or `false` from the environment variable `name`; `fallback` when it is unset or empty. Throws, naming it, for anything else. */
export function envBoolean(value: string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`${name} must be true or false, got '${value}'`);
}

/**
 * A whole number from the environment variable `name` holding `value`, at
 * least `min`; `fallback` when it is unset or empty. Throws, naming the
 * variable, for anything else.
 */
export function envNumber(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined || value === '') return fallback;
  const n = /^[0-9]{1,15}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min)) throw new Error(`${name} must be a whole number of ${min} or more, got '${value}'`);
  return n;
}

/**
 * Throws, naming `name`, unless `url` is something the Redis client reads
 * as an address: `redis://` or `rediss://` URLs, `host:port`, a port, a
 * Unix socket path. The value is never quoted: it may hold a password.
 */
export function checkRedisUrl(url: string, name: string): void {
  if (/^[0-9]+$/.test(url) || url.startsWith('/')) return;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1];
  if (scheme !== undefined && !/^rediss?$/i.test(scheme)) {
    throw new Error(`${name} must be a redis:// or rediss:// URL, not ${scheme.toLowerCase()}://`);
  }
  try {
    new URL(scheme === undefined ? `redis://${url}` : url);
  } catch {
    throw new Error(`${name} is not a URL the Redis client can read: write redis://[:password@]host[:port][/db]`);
  }
}

/**
 * `value` when it is a whole number from `min` to `max`; throws naming the
 * option otherwise. An option from code that is negative, fractional or NaN
 * would not fail where it is given but far from it (a body limit of -5
 * refusing every body, a grace of NaN closing at once).
 */
function wholeNumber(
  value: number | undefined,
  name: string,
  what: string,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `${min}-${max}`;
    throw new RangeError(`${name} must be ${what} (${range}), got ${String(value)}`);
  }
  return value;
}

/**
 * The bookings database the options and the environment name: `databaseUrl`
 * (else `DATABASE_URL`, checked), and PGlite's `dataDir` (else
 * `GATEHOUSE_DATA`, else `data` beside the config folder).
 */
export function bookingDatabaseOptions(
  options: { databaseUrl?: string; dataDir?: string },
  configDir: string,
  env: NodeJS.ProcessEnv = process.env,
): { databaseUrl?: string; dataDir: string } {
  const databaseUrl = options.databaseUrl ?? (env.DATABASE_URL || undefined);
  if (databaseUrl !== undefined)
    checkDatabaseUrl(databaseUrl, options.databaseUrl === undefined ? 'DATABASE_URL' : 'the database URL');
  // Beside the config folder, not in it: the folder is watched, and may be mounted read-only.
  return { databaseUrl, dataDir: resolve(options.dataDir ?? (env.GATEHOUSE_DATA || join(dirname(configDir), 'data'))) };
}

/** Whether `domain` is a DNS name (`cluster.local`, `k8s.example.com`), without a trailing dot. */
export function isDnsDomain(domain: string): boolean {
  return /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i.test(domain);
}

/** Throws, naming `name`, unless `domain` is a DNS name (see {@link isDnsDomain}). */
export function checkClusterDomain(domain: string, name: string): void {
  if (!isDnsDomain(domain)) throw new RangeError(`${name} must be a DNS domain such as cluster.local, got '${domain}'`);
}

/**
 * What each option is (`typeof`, 'array' for a list), checked at run time
 * for callers from JavaScript, whom no compiler tells of a misspelt name
 * (`prot: 8090`, which would listen on 8080 without a word) or a port
 * given as a string. Its type keeps it to the options' own names.
 */
const OPTION_TYPES: Record<keyof GatehouseOptions, string> = {
  configDir: 'string',
  host: 'string',
  port: 'number',
  grpcHost: 'string',
  grpcPort: 'number or false',
  redisUrl: 'string',
  databaseUrl: 'string',
  dataDir: 'string',
  bookingStore: 'string',
  databaseTimeoutMs: 'number',
  tls: 'object',
  modules: 'array',
  annotationDomain: 'string',
  ambassadorId: 'string',
  bodyLimit: 'number',
  clusterDomain: 'string',
  retryBufferBytes: 'number',
  trustProxy: 'boolean',
  sourceCluster: 'string',
  watch: 'boolean',
  reloadDebounceMs: 'number',
  shutdownGraceMs: 'number',
  drainDelayMs: 'number',
  grpcMaxMessageBytes: 'number',
  grpcMaxConnections: 'number',
  grpcRequestTimeoutMs: 'number',
  maxDescriptorEntries: 'number',
  keepAliveTimeoutMs: 'number',
  logger: 'object',
  fileSizeLimit: 'number',
  configSource: 'object',
};

/** What `value` is, in the words of {@link OPTION_TYPES}. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  return value === null ? 'null' : typeof value;
}

/** Throws a TypeError for options that are no object, an option of no such name, or one of another type. */
function checkOptionTypes(options: unknown): asserts options is GatehouseOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`the options must be an object, got ${kindOf(options)}`);
  }
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const expected = (OPTION_TYPES as Record<string, string>)[name];
    if (expected === undefined)
      throw new TypeError(`there is no option '${name}'; the options are ${Object.keys(OPTION_TYPES).join(', ')}`);
    const kind = kindOf(value);
    const fits = expected === 'number or false' ? kind === 'number' || value === false : kind === expected;
    if (!fits)
      throw new TypeError(
        `${name} must be ${/^[aeiou]/.test(expected) ? 'an' : 'a'} ${expected}, got ${kind === 'string' ? JSON.stringify(value) : kind}`,
      );
  }
  const { modules, tls, logger, configSource, annotationDomain } = options as Record<string, unknown>;
  if (Array.isArray(modules)) {
    modules.forEach(checkModule);
    checkModuleNames(modules as { name: string }[]);
  }
  if (tls !== undefined) checkTlsFiles(tls as Record<string, unknown>);
  if (logger !== undefined)
    checkMethods(logger as Record<string, unknown>, 'logger', 'a pino logger', ['child', 'info', 'warn', 'error']);
  if (configSource !== undefined)
    checkMethods(configSource as Record<string, unknown>, 'configSource', 'a source of config files', ['list', 'read']);
  if (typeof annotationDomain === 'string' && !isDnsDomain(annotationDomain)) {
    throw new RangeError(
      `annotationDomain must be a DNS domain such as gatehouse.io (the annotation read is <domain>/config), got '${annotationDomain}'`,
    );
  }
}

/** Throws a TypeError unless `tls` is `{cert, key}`, each a file's path. */
function checkTlsFiles(tls: Record<string, unknown>): void {
  for (const name of Object.keys(tls)) {
    if (name !== 'cert' && name !== 'key')
      throw new TypeError(`there is no option 'tls.${name}'; tls has cert and key, the paths of the PEM files`);
  }
  for (const name of ['cert', 'key']) {
    if (typeof tls[name] !== 'string' || tls[name] === '')
      throw new TypeError(`tls.${name} must be the path of a PEM file, got ${kindOf(tls[name])}`);
  }
}

/** Throws a TypeError naming `name` unless `value` has each of `methods`. */
function checkMethods(value: Record<string, unknown>, name: string, what: string, methods: readonly string[]): void {
  const missing = methods.filter((method) => typeof value[method] !== 'function');
  if (missing.length > 0)
    throw new TypeError(`${name} must be ${what}, with ${methods.join(', ')}: it has no ${missing.join(', ')}`);
}

/** Throws a TypeError for two modules of one name, of which the gateway would route to the last alone. */
function checkModuleNames(modules: readonly { name: string }[]): void {
  const seen = new Map<string, number>();
  modules.forEach((m, index) => {
    const first = seen.get(m.name);
    if (first !== undefined)
      throw new TypeError(
        `modules[${index}].name '${m.name}' is the name of modules[${first}] too: each module has a name of its own`,
      );
    seen.set(m.name, index);
  });
}

/** Whether `value` is a Koa app (or one like it): what the gateway calls on a module's app. */
function isKoaApp(value: unknown): boolean {
  const app = value as { callback?: unknown; middleware?: unknown } | null;
  return typeof app === 'object' && app !== null && typeof app.callback === 'function' && Array.isArray(app.middleware);
}

/** Throws a TypeError naming `modules[index]` when it is no module: a name, and an app, mounts and methods of the right kinds. */
function checkModule(module: unknown, index: number): void {
  const at = `modules[${index}]`;
  if (typeof module !== 'object' || module === null || Array.isArray(module))
    throw new TypeError(`${at} must be a module (an object with a name), got ${kindOf(module)}`);
  const m = module as Record<string, unknown>;
  if (typeof m.name !== 'string' || m.name === '')
    throw new TypeError(`${at}.name must be a string that is not empty, got ${kindOf(m.name)}`);
  if (m.app !== undefined && !isKoaApp(m.app)) throw new TypeError(`${at}.app must be a Koa app, got ${kindOf(m.app)}`);
  if (m.mounts !== undefined) {
    if (typeof m.mounts !== 'object' || m.mounts === null)
      throw new TypeError(`${at}.mounts must be an object of Koa apps by prefix, got ${kindOf(m.mounts)}`);
    for (const [prefix, app] of Object.entries(m.mounts))
      if (!isKoaApp(app)) throw new TypeError(`${at}.mounts['${prefix}'] must be a Koa app, got ${kindOf(app)}`);
  }
  for (const method of ['reload', 'close', 'authenticate', 'shouldRateLimit'] as const) {
    if (m[method] !== undefined && typeof m[method] !== 'function')
      throw new TypeError(`${at}.${method} must be a function, got ${kindOf(m[method])}`);
  }
}

/** The bounds of the rate-limit service's requests and of its gRPC port. */
export type RateLimitBounds = Required<
  Pick<GatehouseOptions, 'grpcMaxMessageBytes' | 'grpcMaxConnections' | 'grpcRequestTimeoutMs' | 'maxDescriptorEntries'>
>;

/**
 * The rate-limit bounds `options` give, else the environment's
 * (`GRPC_MAX_MESSAGE_BYTES`, `GRPC_MAX_CONNECTIONS`, `GRPC_REQUEST_TIMEOUT_MS`,
 * `MAX_DESCRIPTOR_ENTRIES`), else the defaults: read alike by `gatehouse
 * start` and by the service served alone. Throws for a malformed variable.
 */
export function rateLimitBounds(
  options: Partial<RateLimitBounds>,
  env: NodeJS.ProcessEnv = process.env,
): RateLimitBounds {
  return {
    grpcMaxMessageBytes:
      options.grpcMaxMessageBytes ??
      envNumber(env.GRPC_MAX_MESSAGE_BYTES, 'GRPC_MAX_MESSAGE_BYTES', MAX_MESSAGE_BYTES, 1),
    grpcMaxConnections:
      options.grpcMaxConnections ?? envNumber(env.GRPC_MAX_CONNECTIONS, 'GRPC_MAX_CONNECTIONS', MAX_CONNECTIONS, 1),
    grpcRequestTimeoutMs:
      options.grpcRequestTimeoutMs ??
      envNumber(env.GRPC_REQUEST_TIMEOUT_MS, 'GRPC_REQUEST_TIMEOUT_MS', REQUEST_TIMEOUT_MS, 1),
    maxDescriptorEntries:
      options.maxDescriptorEntries ??
      envNumber(env.MAX_DESCRIPTOR_ENTRIES, 'MAX_DESCRIPTOR_ENTRIES', MAX_DESCRIPTOR_ENTRIES, 1),
  };
}

/** Applies the environment and the defaults. Throws for a malformed value. */
export function resolveOptions(options: GatehouseOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  checkOptionTypes(options);
  const host = options.host ?? (env.HOST || '127.0.0.1');
  const tlsFromEnv = env.TLS_CERT && env.TLS_KEY ? { cert: env.TLS_CERT, key: env.TLS_KEY } : undefined;
  if (!options.tls && (env.TLS_CERT || env.TLS_KEY) && !tlsFromEnv) {
    throw new Error('TLS_CERT and TLS_KEY must be set together');
  }
  const redisUrl = options.redisUrl ?? (env.REDIS_URL || undefined);
  if (redisUrl !== undefined) checkRedisUrl(redisUrl, options.redisUrl === undefined ? 'REDIS_URL' : 'the Redis URL');
  wholeNumber(options.port, 'port', 'a port number', 0, 65535);
  if (options.grpcPort !== false) wholeNumber(options.grpcPort, 'grpcPort', 'a port number or false', 0, 65535);
  wholeNumber(options.bodyLimit, 'bodyLimit', 'a number of bytes');
  wholeNumber(options.retryBufferBytes, 'retryBufferBytes', 'a number of bytes');
  const clusterDomain = options.clusterDomain ?? (env.GATEHOUSE_CLUSTER_DOMAIN || 'cluster.local');
  checkClusterDomain(clusterDomain, options.clusterDomain === undefined ? 'GATEHOUSE_CLUSTER_DOMAIN' : 'clusterDomain');
  wholeNumber(options.reloadDebounceMs, 'reloadDebounceMs', 'a number of milliseconds');
  wholeNumber(options.shutdownGraceMs, 'shutdownGraceMs', 'a number of milliseconds');
  wholeNumber(options.keepAliveTimeoutMs, 'keepAliveTimeoutMs', 'a number of milliseconds');
  wholeNumber(options.fileSizeLimit, 'fileSizeLimit', 'a number of bytes', 1);
  wholeNumber(options.drainDelayMs, 'drainDelayMs', 'a number of milliseconds');
  wholeNumber(options.grpcMaxMessageBytes, 'grpcMaxMessageBytes', 'a number of bytes', 1);
  wholeNumber(options.grpcMaxConnections, 'grpcMaxConnections', 'a number of connections', 1);
  wholeNumber(options.grpcRequestTimeoutMs, 'grpcRequestTimeoutMs', 'a number of milliseconds', 1);
  wholeNumber(options.maxDescriptorEntries, 'maxDescriptorEntries', 'a number of entries', 1);
  if (
    options.ambassadorId !== undefined &&
    (typeof options.ambassadorId !== 'string' || options.ambassadorId.trim() === '')
  ) {
    throw new RangeError(`ambassadorId must be a name, got ${JSON.stringify(options.ambassadorId)}`);
  }
  wholeNumber(options.databaseTimeoutMs, 'databaseTimeoutMs', 'a number of milliseconds', 1);
  if (options.bookingStore !== undefined && options.bookingStore !== 'database' && options.bookingStore !== 'memory') {
    throw new RangeError(`bookingStore must be 'database' or 'memory', got ${String(options.bookingStore)}`);
  }
  const configDir = resolve(options.configDir ?? (env.GATEHOUSE_CONFIG || 'config'));
  return {
    configDir,
    host,
    port: options.port ?? envPort(env.PORT, 'PORT', 8080),
    grpcHost: options.grpcHost ?? host,
    grpcPort: options.grpcPort ?? envPort(env.GRPC_PORT, 'GRPC_PORT', 8081),
    redisUrl,
    ...bookingDatabaseOptions(options, configDir, env),
    bookingStore: options.bookingStore ?? 'database',
    databaseTimeoutMs:
      options.databaseTimeoutMs ??
      envNumber(env.DATABASE_TIMEOUT_MS, 'DATABASE_TIMEOUT_MS', DEFAULT_DATABASE_TIMEOUT_MS, 1),
    tls: options.tls ?? tlsFromEnv,
    modules: options.modules ?? [],
    annotationDomain: options.annotationDomain ?? 'gatehouse.io',
    ambassadorId: options.ambassadorId ?? (env.AMBASSADOR_ID || 'default'),
    bodyLimit: options.bodyLimit ?? envByteSize(env.BODY_LIMIT, 'BODY_LIMIT', 1024 * 1024),
    clusterDomain,
    retryBufferBytes: options.retryBufferBytes ?? 1024 * 1024,
    trustProxy: options.trustProxy ?? envBoolean(env.TRUST_PROXY, 'TRUST_PROXY', false),
    sourceCluster: options.sourceCluster,
    watch: options.watch ?? true,
    reloadDebounceMs: options.reloadDebounceMs ?? 200,
    shutdownGraceMs: options.shutdownGraceMs ?? envNumber(env.SHUTDOWN_GRACE_MS, 'SHUTDOWN_GRACE_MS', 10_000),
    keepAliveTimeoutMs:
      options.keepAliveTimeoutMs ??
      envNumber(env.KEEP_ALIVE_TIMEOUT_MS, 'KEEP_ALIVE_TIMEOUT_MS', KEEP_ALIVE_TIMEOUT_MS),
    drainDelayMs: options.drainDelayMs ?? envNumber(env.DRAIN_DELAY_MS, 'DRAIN_DELAY_MS', DRAIN_DELAY_MS),
    ...rateLimitBounds(options, env),
    logger: options.logger,
    fileSizeLimit: options.fileSizeLimit ?? envFileSizeLimit(env.GATEHOUSE_FILE_SIZE_LIMIT),
    configSource: options.configSource ?? fileSystemSource,
  };
}
