/**
 * @module gatehouse/served-ports
 * The ports a Gatehouse serves beside PORT — the HTTPS port, the cleartext
 * ports Hosts ask for, the gRPC rate-limit server — and the listen settings
 * every port shares.
 */
import type Koa from 'koa';
import { allowedUpgrades, type Gateway, type GatewayConfig } from '../gateway';
import { createRateLimitGrpcServer, type RateLimitGrpcServer } from '../ratelimit';
import { rejectedRequestLog, type Logger, type Metrics, type RouteCounters } from '../telemetry';
import { createAdditionalPorts, type AdditionalPorts } from './additional-ports';
import { createHttpsPort, type HttpsPort } from './https-port';
import type { ResolvedOptions } from './options';
import type { ListenOptions, RunningServer } from './serving/http-server';

/** Whether a Mapping of `config` tunnels protocol upgrades: only then does the server hand them over (see ./serving/upgrades). */
export function tunnelsUpgrades(config: GatewayConfig): boolean {
  return config.mappings.some((m) => allowedUpgrades(m).length > 0);
}

/** The listen settings PORT, the HTTPS port and the additional ports share. */
export type SharedListening = Pick<
  ListenOptions,
  'keepAliveTimeoutMs' | 'onRejected' | 'reusePort' | 'http2' | 'http2Limits'
>;

/** What the ports of a Gatehouse are built from. */
export interface ServedPortsParts {
  readonly options: ResolvedOptions;
  readonly app: Koa;
  readonly gateway: Gateway;
  /** The configuration served now. */
  readonly config: () => GatewayConfig;
  /** PORT's server, while it listens. */
  readonly mainServer: () => RunningServer | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly counters: RouteCounters;
}

/** The ports of a Gatehouse beside PORT, and the settings PORT listens with. */
export interface ServedPorts {
  readonly https: HttpsPort;
  /** The cleartext ports Hosts ask for beside PORT, served as it is. */
  readonly additional: AdditionalPorts;
  /** The settings every port listens with. */
  readonly listening: SharedListening;
}

/** Builds the HTTPS and additional ports of a Gatehouse; none listens until started. */
export function createServedPorts(parts: ServedPortsParts): ServedPorts {
  const { options, app, gateway, config, logger, metrics, counters } = parts;
  const onRejected = rejectedRequestLog({ logger, metrics, counters });
  // HTTP/2 is offered on every port alike, with the same bounds; so is listening beside other workers.
  const http2Listening = {
    reusePort: options.reusePort,
    http2: options.http2,
    http2Limits: {
      maxConcurrentStreams: options.http2MaxConcurrentStreams,
      maxSessionMemoryMib: options.http2MaxSessionMemory,
    },
  };
  const https = createHttpsPort({
    host: options.host,
    port: options.httpsPort,
    handler: app.callback(),
    tls: () => gateway.tls(),
    fallback: options.tls,
    fileSizeLimit: options.fileSizeLimit,
    logger,
    upgrades: () => tunnelsUpgrades(config()),
    listen: { keepAliveTimeoutMs: options.keepAliveTimeoutMs, onRejected, ...http2Listening },
    metrics,
  });
  const additional = createAdditionalPorts({
    host: options.host,
    handler: app.callback(),
    hosts: () => config().hosts,
    // With --tls-cert, PORT speaks HTTPS: a Host that names it still opens nothing more.
    mainPort: () => parts.mainServer()?.port,
    upgrades: () => tunnelsUpgrades(config()),
    logger,
    listen: { keepAliveTimeoutMs: options.keepAliveTimeoutMs, onRejected, ...http2Listening },
  });
  return {
    https,
    additional,
    listening: { keepAliveTimeoutMs: options.keepAliveTimeoutMs, ...http2Listening, onRejected },
  };
}

/** The gRPC rate-limit server of a Gatehouse, not listening until started; none with `grpcPort: false`. */
export function createGrpcServer(
  options: ResolvedOptions,
  rateLimit: Parameters<typeof createRateLimitGrpcServer>[0],
): RateLimitGrpcServer | undefined {
  return options.grpcPort === false
    ? undefined
    : createRateLimitGrpcServer(rateLimit, {
        host: options.grpcHost,
        port: options.grpcPort,
        bound: options.ports?.grpc,
        maxMessageBytes: options.grpcMaxMessageBytes,
        maxConnections: options.grpcMaxConnections,
        requestTimeoutMs: options.grpcRequestTimeoutMs,
      });
}
