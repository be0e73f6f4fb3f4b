/**
 * @module gatehouse/start
 * The start of a Gatehouse: PORT, the HTTPS and additional ports and gRPC
 * listening, and the folder and TLS files watched. What a start opened is
 * closed again when a later part of it fails, so that it may be tried again.
 */
import type http from 'node:http';
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

/** The longest the gRPC server waits for PORT to answer the requests that waited for it, in ms. */
export const FIRST_ANSWERS_WAIT_MS = 1000;

const loopTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once `server` has answered the requests that came while it was
 * built (or after {@link FIRST_ANSWERS_WAIT_MS}): three turns of the event
 * loop accept their connections, read them and begin them; then it waits
 * for the last to end. What follows holds the event loop for a while.
 */
async function afterWaitingRequests(server: http.Server): Promise<void> {
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    inFlight++;
    res.once('close', () => {
      if (--inFlight === 0) wake?.();
    });
  };
  server.on('request', onRequest);
  try {
    for (let turn = 0; turn < 3; turn++) await loopTurn();
    if (inFlight > 0)
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, FIRST_ANSWERS_WAIT_MS).unref();
      });
  } finally {
    server.off('request', onRequest);
  }
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
    await afterWaitingRequests(server.server);
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
