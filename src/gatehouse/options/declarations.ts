/**
 * @module gatehouse/options/declarations
 * Every option of Gatehouse, each declared once: its flag, environment
 * variable, kind (type and bounds), default and help line. Adding an option
 * is adding an entry here, or in the file of its group spread in here (the
 * bookings', the gRPC port's, HTTP/2's, tracing's `OTEL_*` variables, those
 * only an embedding app sets), at the place it is to be listed; the help of
 * `start` and `serve`, the reading of flags and variables,
 * `GatehouseOptions` and the table in docs/operations.md follow from it.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { tlsFiles } from './code-values';
import { option, type ServeOnly } from './declaration';
import { BOOKINGS_OPTIONS } from './declarations-bookings';
import { EMBEDDING_OPTIONS } from './declarations-embedding';
import { GRPC_SERVICE_OPTIONS } from './declarations-grpc';
import { HTTP2_OPTIONS } from './declarations-http2';
import { PROCESS_OPTIONS } from './declarations-process';
import { TRACING_OPTIONS } from './tracing-options';
import { boolean, bytes, dnsDomain, milliseconds, oneOf, port, portOrNone, redisUrl, text, workerCount } from './kinds';

/** `serve` takes the counters' options only for the module that counts. */
const COUNTERS: ServeOnly = { modules: ['ratelimit'], others: 'keeps no counters' };

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

export const OPTIONS = {
  configDir: option({
    kind: text('the name of a folder', '<dir>', (dir) => resolve(dir)),
    flag: '--config',
    env: 'GATEHOUSE_CONFIG',
    default: 'config',
    shown: '`./config`',
    help: 'the config folder',
    more: '([configuration.md](configuration.md))',
    commands: ['start', 'serve', 'check'],
  }),
  host: option({
    kind: text('a host name or IP address', '<addr>'),
    flag: '--host',
    env: 'HOST',
    default: '127.0.0.1',
    help: 'the listen address (0.0.0.0 for every interface)',
    commands: ['start', 'serve'],
  }),
  port: option({
    kind: port,
    flag: '--port',
    env: 'PORT',
    default: 8080,
    help: 'the HTTP port; 0 picks a free one',
    more: '(`serve ratelimit`: the gRPC port, `GRPC_PORT` without it)',
    commands: ['start', 'serve'],
  }),
  httpsPort: option({
    kind: portOrNone,
    flag: '--https-port',
    env: 'HTTPS_PORT',
    default: 8443,
    help: 'the HTTPS port, opened as soon as a Host or TLSContext has a certificate; 0 picks a free one, false opens none',
    more: '([listeners](#listeners))',
    commands: ['start'],
  }),
  grpcHost: option({
    kind: text('a host name or IP address', '<addr>'),
    default: (o) => o.host as string,
    shown: 'the `host`',
    help: 'the gRPC listen address',
  }),
  grpcPort: option({
    kind: portOrNone,
    flag: '--grpc-port',
    env: 'GRPC_PORT',
    default: 8081,
    help: 'the gRPC rate-limit port; 0 picks a free one, false runs none',
    commands: ['start'],
  }),
  ambassadorId: option({
    kind: text('a name', '<id>'),
    flag: '--ambassador-id',
    env: 'AMBASSADOR_ID',
    default: 'default',
    help: 'serve the records whose ambassador_id names this id (or that name none, for default)',
    more: ', as in Emissary ([configuration.md](configuration.md#the-config-folder))',
    commands: ['start', 'check'],
  }),
  redisUrl: option({
    kind: redisUrl,
    flag: '--redis',
    env: 'REDIS_URL',
    shown: 'counters in memory',
    help: 'Redis for the rate-limit counters',
    more: ': `redis://[:password@]host[:port][/db]`, `rediss://`, `host:port`, or a socket path ([rate-limits.md](rate-limits.md#redis))',
    commands: ['start', 'serve'],
    serveOnly: COUNTERS,
  }),
  ...BOOKINGS_OPTIONS,
  tlsCert: option({
    kind: text('the name of a file', '<file>'),
    flag: '--tls-cert',
    env: 'TLS_CERT',
    shown: 'plain HTTP',
    help: 'serve HTTPS on the --port with this certificate (PEM, the chain after it)',
    more: '([listeners](#listeners))',
    commands: ['start'],
    library: 'tls.cert',
  }),
  tlsKey: option({
    kind: text('the name of a file', '<file>'),
    flag: '--tls-key',
    env: 'TLS_KEY',
    help: 'and this key (PEM, not encrypted)',
    commands: ['start'],
    library: 'tls.key',
  }),
  tls: option({
    kind: tlsFiles,
    shown: 'plain HTTP',
    help: 'serve HTTPS with these files: {cert, key}, the paths of PEM files',
  }),
  workers: option({
    kind: workerCount(availableParallelism()),
    flag: '--workers',
    env: 'WORKERS',
    default: 1,
    help: 'threads that serve the ports together, sharing counters, bookings and config; auto: one per core',
    more: '(Node 22.12 or later; [workers](#workers))',
    commands: ['start'],
    library: false,
  }),
  ...PROCESS_OPTIONS,
  reusePort: option({
    kind: boolean,
    default: false,
    help: 'listen beside other processes or threads on the same ports (SO_REUSEPORT, Node 22.12 or later)',
    more: '(each worker of `gatehouse start --workers` does)',
  }),
  watch: option({
    kind: boolean,
    flag: '--no-watch',
    flagSets: false,
    default: true,
    help: 'reload when the config folder or the TLS files change',
    flagHelp: 'do not reload when the files read change (the config folder, the TLS files)',
    commands: ['start', 'serve'],
  }),
  drainDelayMs: option({
    kind: milliseconds(0),
    flag: '--drain-delay-ms',
    env: 'DRAIN_DELAY_MS',
    default: 5000,
    help: 'on SIGTERM/SIGINT, serve this long, not ready and closing every connection after its answer, before the ports close, in ms; 0 closes at once',
    more: '([drain](#shutdown-and-drain))',
    commands: ['start', 'serve'],
  }),
  shutdownGraceMs: option({
    kind: milliseconds(0),
    flag: '--shutdown-grace-ms',
    env: 'SHUTDOWN_GRACE_MS',
    default: 10_000,
    help: 'then how long requests in flight may take to finish, in ms',
    commands: ['start'],
  }),
  keepAliveTimeoutMs: option({
    kind: milliseconds(0),
    flag: '--keep-alive-timeout-ms',
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    default: 65_000,
    help: 'how long an idle keep-alive connection is kept, in ms',
    more: '([keep-alive](#keep-alive))',
    commands: ['start'],
  }),
  ...HTTP2_OPTIONS,
  bodyLimit: option({
    kind: bytes(0),
    flag: '--body-limit',
    env: 'BODY_LIMIT',
    default: 1024 * 1024,
    help: 'the largest request body; a longer one is a 413',
    commands: ['start'],
  }),
  retryBufferBytes: option({
    kind: bytes(0),
    default: 1024 * 1024,
    help: 'the largest body a Mapping with retry_policy keeps to send again',
  }),
  trustProxy: option({
    kind: boolean,
    flag: '--trust-proxy',
    env: 'TRUST_PROXY',
    default: false,
    help: 'behind another proxy: take the scheme, host and client from its X-Forwarded-* headers',
    more: "(`X-Forwarded-Proto`, `-Host` and `-For`); remote upstreams get its `Forwarded` with the gateway's element appended, and its `X-Real-IP`, `X-Forwarded-Port`, `-Prefix`, `-Ssl` and other forwarding headers as it sent them; off, a client's copies of those are dropped ([security.md](security.md#headers)). That proxy must write or remove each one its backends read",
    commands: ['start'],
  }),
  ...GRPC_SERVICE_OPTIONS,
  fileSizeLimit: option({
    kind: bytes(1),
    flag: '--file-size-limit',
    env: 'GATEHOUSE_FILE_SIZE_LIMIT',
    default: 8 * 1024 * 1024,
    help: 'the largest file read: records, limits, users, booking data, TLS',
    commands: ['start', 'serve', 'check'],
  }),
  clusterDomain: option({
    kind: dnsDomain('cluster.local'),
    flag: '--cluster-domain',
    env: 'GATEHOUSE_CLUSTER_DOMAIN',
    default: 'cluster.local',
    help: "Kubernetes' cluster domain: a service quote.shop is looked up as quote.shop.svc.<domain> first",
    more: '([upstreams.md](upstreams.md))',
    commands: ['start'],
  }),
  // The standard OTEL_* variables of tracing, declared beside: ./tracing-options.
  ...TRACING_OPTIONS,
  logLevel: option({
    kind: oneOf(LOG_LEVELS),
    env: 'LOG_LEVEL',
    default: 'info',
    help: 'what is logged on stdout: trace, debug, info (with one access line a request), warn, error, fatal or silent',
    commands: ['start', 'serve'],
  }),
  ...EMBEDDING_OPTIONS,
};

/** The name of an option. */
export type OptionName = keyof typeof OPTIONS;
