/**
 * @module cli/usage
 * The help of the `gatehouse` command and of each of its commands: every
 * option, the environment variable it is also read from, and its default.
 */
import { SERVABLE_MODULES } from './servable';

export const USAGE = `Usage: gatehouse <command> [options]

Commands:
  start              run the gateway with every built-in module (what npm start runs)
  check [dir]        validate a config folder and print the route table
  serve <module>     run one module alone: ${SERVABLE_MODULES.join(', ')}

Run 'gatehouse <command> --help' for the options of a command,
'gatehouse --version' for the version.`;

export const START_USAGE = `Usage: gatehouse start [options]

Runs the gateway and its built-in modules from a config folder: HTTP on
HOST:PORT, the gRPC rate-limit service on HOST:GRPC_PORT.

Options (each also read from the environment variable in brackets):
  --config <dir>     config folder [GATEHOUSE_CONFIG] (default ./config)
  --host <addr>      listen address [HOST] (default 127.0.0.1)
  --port <n>         HTTP port [PORT] (default 8080)
  --grpc-port <n>    gRPC port [GRPC_PORT] (default 8081)
  --redis <url>      Redis for rate-limit counters [REDIS_URL] (default: in memory)
  --ambassador-id <id>
                     serve the records whose ambassador_id names <id> (or that
                     name none, for default) [AMBASSADOR_ID] (default default)
  --database-url <url>  PostgreSQL for bookings, shared by every process [DATABASE_URL]
  --data <dir>       folder of the embedded bookings database, without
                     --database-url [GATEHOUSE_DATA] (default: data beside the config folder)
  --database-timeout-ms <n>
                     answer 503 when a bookings database call takes longer
                     [DATABASE_TIMEOUT_MS] (default 5000)
  --tls-cert <file>  serve HTTPS with this certificate [TLS_CERT]
  --tls-key <file>   and this key [TLS_KEY]
  --drain-delay-ms <n>
                     on SIGTERM/SIGINT, serve this long, not ready and closing
                     every connection after its answer, before the ports close
                     [DRAIN_DELAY_MS] (default 5000; 0 closes at once)
  --shutdown-grace-ms <n>
                     then how long requests in flight may take to finish
                     [SHUTDOWN_GRACE_MS] (default 10000)
  --keep-alive-timeout-ms <n>
                     how long an idle keep-alive connection is kept
                     [KEEP_ALIVE_TIMEOUT_MS] (default 65000)
  --body-limit <size>
                     largest request body, else 413 [BODY_LIMIT] (default 1m)
  --trust-proxy      behind another proxy: take the scheme, host and client
                     from its X-Forwarded-* headers [TRUST_PROXY=true]
  --grpc-max-message-bytes <n>
                     largest gRPC rate-limit request [GRPC_MAX_MESSAGE_BYTES]
                     (default 65536)
  --grpc-max-connections <n>
                     most connections open at once on the gRPC port
                     [GRPC_MAX_CONNECTIONS] (default 4096)
  --grpc-request-timeout-ms <n>
                     how long a gRPC call's request may take to arrive whole
                     [GRPC_REQUEST_TIMEOUT_MS] (default 10000)
  --max-descriptor-entries <n>
                     most entries in one rate-limit descriptor
                     [MAX_DESCRIPTOR_ENTRIES] (default 64)
  --no-watch         do not reload when the config folder or the TLS files change
  --file-size-limit <size>
                     largest file read (records, limits, users, data, TLS)
                     [GATEHOUSE_FILE_SIZE_LIMIT] (default 8m; 512k, 16m, 1g)
  --cluster-domain <domain>
                     Kubernetes' cluster domain, for service names such as
                     quote.shop [GATEHOUSE_CLUSTER_DOMAIN] (default cluster.local)
  -h, --help         show this help

LOG_LEVEL sets what is logged on stdout: trace, debug, info (the default,
with one access line a request), warn, error, fatal or silent.
SIGHUP reloads the config folder, as a change in it does. A second SIGTERM
or SIGINT stops at once. Run through npx or an npm script, it also stops
once the npm process that started it is gone.
Exit status: 1 when it cannot start (the problem is on stderr), 2 for a
mistake on the command line; 0 once stopped by SIGTERM or SIGINT.`;

export const CHECK_USAGE = `Usage: gatehouse check [dir | --config <dir>] [--file-size-limit <size>] [--ambassador-id <id>]

Validates a config folder (default GATEHOUSE_CONFIG, else ./config): the gateway
records, the rate limits, the users file and the booking data. Prints the route
table in match order, what each Emissary resource became, and the records of
another ambassador_id (AMBASSADOR_ID, default default), or every problem;
exits 1 when there is a problem. A file larger than --file-size-limit
[GATEHOUSE_FILE_SIZE_LIMIT] (default 8m) is a problem, as it is to start.`;

export const SERVE_USAGE = `Usage: gatehouse serve <module> [options]

Runs one module alone, so that a gateway can be pointed at it over the network.
Modules: ${SERVABLE_MODULES.join(', ')} (ratelimit serves gRPC, the others HTTP).

Options:
  --port <n>         port (default PORT, else 8080; for ratelimit GRPC_PORT, else 8081)
  --host <addr>      listen address [HOST] (default 127.0.0.1)
  --config <dir>     config folder for the module's files [GATEHOUSE_CONFIG] (default ./config)
  --redis <url>      ratelimit only: Redis for counters [REDIS_URL]
  --database-url <url>  hotel-booking, car-booking: PostgreSQL for bookings [DATABASE_URL]
  --data <dir>       hotel-booking, car-booking: folder of the embedded bookings
                     database [GATEHOUSE_DATA] (default: data beside the config folder)
  --database-timeout-ms <n>
                     hotel-booking, car-booking: answer 503 when a database
                     call takes longer [DATABASE_TIMEOUT_MS] (default 5000)
  --file-size-limit <size>
                     largest file read [GATEHOUSE_FILE_SIZE_LIMIT] (default 8m)
  --drain-delay-ms <n>
                     on SIGTERM/SIGINT, serve this long (closing every connection
                     after its answer; ratelimit: health NOT_SERVING) before the
                     port closes [DRAIN_DELAY_MS] (default 5000)
  --grpc-max-message-bytes <n>, --grpc-max-connections <n>,
  --grpc-request-timeout-ms <n>, --max-descriptor-entries <n>
                     ratelimit only: as for start [GRPC_MAX_MESSAGE_BYTES,
                     GRPC_MAX_CONNECTIONS, GRPC_REQUEST_TIMEOUT_MS,
                     MAX_DESCRIPTOR_ENTRIES]
  --no-watch         do not reload when the module's files change
  -h, --help         show this help

LOG_LEVEL sets what is logged on stdout (default info: an HTTP module logs
one access line a request). SIGHUP reads the module's files again, as a
change in them does. SIGTERM and SIGINT stop it as they stop start.`;
