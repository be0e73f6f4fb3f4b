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
  /** Set as a stop begins: a load balancer that asks takes requests elsewhere while they are still answered. */
  draining: boolean;
}

/** What a start listens with. */
export interface StartParts {
  readonly options: ResolvedOptions;
  readonly app: Koa;
  readonly ports: ServedPorts;
  readonly grpcServer?: RateLimitGrpcServer;
  readonly tracing: Tracing;
  readonly logger: Logger;
  /** The configuration served now. */
  readonly config: () => GatewayConfig;
  /** Another thread watches the folder and reloads this Gatehouse: it does not watch it itself. */
  readonly folderWatchedElsewhere?: boolean;
  /** Reloads the folder, when a watched file changes. */
  readonly reload: () => Promise<unknown>;
}

/** Listens for HTTP(S) and gRPC, and watches the folder unless told not to; records what it opened in `running`. */
export async function listenAll(parts: StartParts, running: Running): Promise<Listening> {
  const { options, app, ports, grpcServer, tracing, logger } = parts;
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
    grpcPort = await grpcServer?.start().catch((err: unknown) => {
      throw listenFailure(err, 'gRPC', options.grpcHost, options.grpcPort as number);
    });
  } catch (err) {
    await Promise.all([server.close(0), https.server?.close(0), additional.close(0)]);
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
