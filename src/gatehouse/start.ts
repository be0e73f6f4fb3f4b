/**
 * @module gatehouse/start
 * The start of a Gatehouse: PORT, the HTTPS and additional ports and gRPC
 * listening, and the folder and TLS files watched. What a start opened is
 * closed again when a later part of it fails, so that it may be tried again.
 */
import type Koa from 'koa';
import type { GatewayConfig } from '../gateway';
import { hostPort } from '../http';
import type { RateLimitGrpcServer } from '../ratelimit';
import type { Logger } from '../telemetry';
import type { Tracing } from '../tracing';
import { watchFolder, type FolderWatcher } from './folder/watch';
import type { ResolvedOptions } from './options';
import { tunnelsUpgrades, type ServedPorts } from './served-ports';
import { listen, type RunningServer } from './serving/http-server';
import { listenFailure } from './serving/listen-failure';
import { followTlsFiles, warnOfValidity } from './serving/tls-files';
import { describeTracing } from './tracing';
import type { Listening } from './types';

/** What a Gatehouse holds open while it runs: set by a start, closed by a stop. */
export interface Running {
  server?: RunningServer;
  watcher?: FolderWatcher;
  tlsWatcher?: FolderWatcher;
  certificateWatcher?: FolderWatcher;
  /** The gRPC rate-limit server, once a start has built it. */
  grpcServer?: RateLimitGrpcServer;
  /** Set while a start has PORT listening and its gRPC server not yet: readiness waits for it. */
  grpcStarting?: boolean;
  /** Set as a stop begins: a load balancer that asks takes requests elsewhere while they are still answered. */
  draining: boolean;
}

/** What a start listens with. */
export interface StartParts {
  readonly options: ResolvedOptions;
  readonly app: Koa;
  readonly ports: ServedPorts;
  /** Builds the gRPC rate-limit server; none with `grpcPort: false`. */
  readonly grpcServer: () => RateLimitGrpcServer | undefined;
  readonly tracing: Tracing;
  readonly logger: Logger;
  /** The configuration served now. */
  readonly config: () => GatewayConfig;
  /** Another thread watches the folder and reloads this Gatehouse: it does not watch it itself. */
  readonly folderWatchedElsewhere?: boolean;
  /** Reloads the folder, when a watched file changes. */
  readonly reload: () => Promise<unknown>;
}

/**
 * Resolves once the event loop has read what waits on the sockets: two
 * turns of it, so that one polls for I/O in between, and the requests that
 * came while the server was built are answered before work that holds it.
 */
function afterWaitingRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Listens for HTTP(S) and gRPC, and watches the folder unless told not to; records what it opened in `running`. */
export async function listenAll(parts: StartParts, running: Running): Promise<Listening> {
  const { options, app, ports, tracing, logger } = parts;
  const { https, additional } = ports;
  // Set before the files are read, so that a change while they are read is seen.
  running.tlsWatcher =
    options.tls && options.watch
      ? followTlsFiles(
          options.tls,
          () => {
            const reloaded = running.server?.reloadTls();
            https.reloadFallback();
            return reloaded;
          },
          logger,
        )
      : undefined;
  const server = await listen(app.callback(), {
    host: options.host,
    port: options.port,
    tls: options.tls,
    fileSizeLimit: options.fileSizeLimit,
    ...ports.listening,
    bound: options.ports?.http,
  }).catch((err: unknown) => {
    running.tlsWatcher?.close();
    throw err;
  });
  running.server = server;
  if (options.tls && server.certificate) warnOfValidity(logger, options.tls.cert, server.certificate);
  server.acceptUpgrades(tunnelsUpgrades(parts.config()));
  let grpcPort: number | undefined;
  try {
    // The HTTPS port, when the configuration has a certificate; listen() names the port at fault.
    await https.start();
    await additional.start();
    running.grpcStarting = true;
    await afterWaitingRequests();
    // Built once PORT answers: grpc-js and the protos take a large part of a start, and a bound
    // gRPC port holds its connections meanwhile.
    const grpcServer = (running.grpcServer = parts.grpcServer());
    grpcPort = await grpcServer?.start().catch((err: unknown) => {
      throw listenFailure(err, 'gRPC', options.grpcHost, options.grpcPort as number);
    });
    running.grpcStarting = false;
  } catch (err) {
    running.grpcStarting = false;
    await Promise.all([server.close(0), https.server?.close(0), additional.close(0), running.grpcServer?.stop()]);
    running.grpcServer = undefined;
    running.server = undefined;
    running.tlsWatcher?.close();
    throw err;
  }
  if (options.watch && !parts.folderWatchedElsewhere) {
    const reload = () => {
      void parts.reload().catch((err: unknown) => logger.error({ err }, 'config reload failed'));
    };
    running.watcher = watchFolder(options.configDir, options.reloadDebounceMs, reload);
    running.certificateWatcher = https.watchFiles(reload);
  }
  const url = `${server.protocol}://${hostPort(options.host, server.port)}`;
  const httpsPort = https.port;
  const additionalPorts = additional.ports;
  logger.info(
    {
      url,
      httpsPort,
      additionalPorts,
      grpcPort,
      configDir: options.configDir,
      tracing: describeTracing(tracing.settings),
    },
    'gatehouse listening',
  );
  return {
    url,
    port: server.port,
    grpcPort,
    ...(httpsPort !== undefined ? { httpsPort } : {}),
    ...(additionalPorts.length > 0 ? { additionalPorts } : {}),
  };
}
