/**
 * @module gatehouse/options/declarations
 * Every option of Gatehouse, each declared once: its flag, environment
 * variable, kind (type and bounds), default and help line. Adding an option
 * is adding an entry here; the help of `start` and `serve`, the reading of
 * flags and variables, `GatehouseOptions` and the table in
 * docs/operations.md follow from it. Those of tracing, the standard
 * `OTEL_*` variables, are declared in ./tracing-options and spread in here.
 */
import { availableParallelism } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileSystemSource } from '../../files';
import { abortSignal, boundPorts, configSource, logger, modules, tlsFiles } from './code-values';
import { option, type ServeOnly } from './declaration';
import { HTTP2_OPTIONS } from './declarations-http2';
import { PROCESS_OPTIONS } from './declarations-process';
import { TRACING_OPTIONS } from './tracing-options';
import {
  boolean,
  bytes,
  dnsDomain,
  integer,
  milliseconds,
  oneOf,
  port,
  portOrNone,
  postgresUrl,
  redisUrl,
  text,
  workerCount,
} from './kinds';

const COUNTERS: ServeOnly = { modules: ['ratelimit'], others: 'keeps no counters' };
const BOOKINGS: ServeOnly = { modules: ['hotel-booking', 'car-booking'], others: 'keeps no bookings' };
const GRPC: ServeOnly = { modules: ['ratelimit'], others: 'serves HTTP' };

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
  databaseUrl: option({
    kind: postgresUrl,
    flag: '--database-url',
    env: 'DATABASE_URL',
    shown: 'PGlite in the data folder',
    help: 'PostgreSQL for the bookings, shared by every process pointed at it',
    more: '(`postgres://user:password@host:5432/database`, [database.md](database.md))',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  dataDir: option({
    kind: text('the name of a folder', '<dir>', (dir) => resolve(dir)),
    flag: '--data',
    env: 'GATEHOUSE_DATA',
    // Beside the config folder, not in it: the folder is watched, and may be mounted read-only.
    default: (o) => join(dirname(o.configDir as string), 'data'),
    shown: 'data beside the config folder',
    help: "PGlite's folder for the bookings, made on the first start, without a database URL",
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  databaseTimeoutMs: option({
    kind: milliseconds(1),
    flag: '--database-timeout-ms',
    env: 'DATABASE_TIMEOUT_MS',
    default: 5000,
    help: 'answer 503 when a call to the bookings database takes longer, in ms',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  pgliteSharedBuffers: option({
    kind: bytes(128 * 1024),
    flag: '--pglite-shared-buffers',
    env: 'PGLITE_SHARED_BUFFERS',
    default: 1024 * 1024,
    help: "PGlite's shared_buffers: its cache of the database's 8 kB pages, all of it resident from the start",
    more: '([memory](#memory-and-start))',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  pgliteCompiler: option({
    kind: oneOf(['baseline', 'optimizing']),
    flag: '--pglite-compiler',
    env: 'PGLITE_COMPILER',
    default: 'baseline',
    help: "how V8 compiles PGlite's WebAssembly: baseline (Liftoff only, tens of MB less memory) or optimizing (V8's default)",
    more: '([memory](#memory-and-start))',
    commands: ['start', 'serve'],
    serveOnly: BOOKINGS,
  }),
  bookingStore: option({
    kind: oneOf(['database', 'memory']),
    default: 'database',
    help: "'memory': bookings in memory, gone on stop(), for tests",
  }),
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
  grpcMaxMessageBytes: option({
    kind: integer(1, undefined, 'bytes'),
    flag: '--grpc-max-message-bytes',
    env: 'GRPC_MAX_MESSAGE_BYTES',
    default: 64 * 1024,
    help: 'the largest rate-limit request (any gRPC message) read',
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
  grpcMaxConnections: option({
    kind: integer(1),
    flag: '--grpc-max-connections',
    env: 'GRPC_MAX_CONNECTIONS',
    default: 4096,
    help: 'the most connections open at once on the gRPC port; one more is closed as it comes',
    more: '([rate-limits.md](rate-limits.md#the-grpc-service))',
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
  grpcRequestTimeoutMs: option({
    kind: milliseconds(1),
    flag: '--grpc-request-timeout-ms',
    env: 'GRPC_REQUEST_TIMEOUT_MS',
    default: 10_000,
    help: "how long a rate-limit call's request may take to arrive whole, else DEADLINE_EXCEEDED, nothing counted",
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
  maxDescriptorEntries: option({
    kind: integer(1),
    flag: '--max-descriptor-entries',
    env: 'MAX_DESCRIPTOR_ENTRIES',
    default: 64,
    help: 'the most entries one rate-limit descriptor may carry',
    commands: ['start', 'serve'],
    serveOnly: GRPC,
  }),
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
  logger: option({ kind: logger, shown: 'pino at `logLevel`', help: 'the logger' }),
  reloadDebounceMs: option({
    kind: milliseconds(0),
    default: 200,
    help: 'how long after the last change in the folder a reload starts, in ms',
  }),
  annotationDomain: option({
    kind: dnsDomain('gatehouse.io'),
    default: 'gatehouse.io',
    help: 'the domain of the <domain>/config annotation',
  }),
  sourceCluster: option({
    kind: text('a name', '<name>'),
    shown: 'gatehouse',
    help: "the value of source_cluster rate-limit labels, as Envoy's --service-cluster",
    more: "(Emissary's is `<ambassador_id>-<namespace>`)",
  }),
  modules: option({
    kind: modules,
    default: [],
    shown: 'none',
    help: "an embedding app's own modules",
    more: '([embedding.md](embedding.md))',
  }),
  configSource: option({
    kind: configSource,
    default: fileSystemSource,
    shown: 'the file system',
    help: "where the config folder's files are read from",
    more: '([embedding.md](embedding.md))',
  }),
  ports: option({
    kind: boundPorts,
    shown: 'bound by `start()`',
    help: 'ports bound beforehand with bindPort(), which start() serves on: {http, grpc}',
    more: '(a process that binds them first learns that one is taken before it opens its database)',
  }),
  signal: option({
    kind: abortSignal,
    help: 'createGatehouse() gives up when it is aborted, closes what it opened and rejects',
  }),
};

/** The name of an option. */
export type OptionName = keyof typeof OPTIONS;
