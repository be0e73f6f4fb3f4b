/**
 * @module gatehouse/stop
 * The graceful stop of a Gatehouse: watching ends, readiness fails, clients
 * are drained, the ports close within the grace, then the reloader, the
 * gateway, the modules, the bookings database and tracing, in that order.
 */
import type { Gateway, ModuleRegistry } from '../gateway';
import type { Logger } from '../telemetry';
import type { Tracing } from '../tracing';
import type { BookingsOnDemand } from './bookings-on-demand';
import type { Reloader } from './folder/reload';
import type { ResolvedOptions } from './options';
import type { ServedPorts } from './served-ports';
import { drainFor } from './serving/drain';
import type { Running } from './start';
import type { Listening } from './types';

/** What a stop closes. */
export interface StopParts {
  readonly options: ResolvedOptions;
  readonly ports: ServedPorts;
  readonly reloader: Reloader;
  readonly gateway: Gateway;
  readonly modules: ModuleRegistry;
  readonly bookings: BookingsOnDemand;
  readonly tracing: Tracing;
  readonly logger: Logger;
  /** The start under way or done, if any. */
  readonly starting: () => Promise<Listening> | undefined;
}

/** Stops a Gatehouse: resolves once everything it opened is closed. */
export async function stopAll(parts: StopParts, running: Running): Promise<void> {
  const { options, ports, logger } = parts;
  const { https, additional } = ports;
  // What a start under way opens is closed with the rest.
  await parts.starting()?.catch(() => undefined);
  running.watcher?.close();
  running.tlsWatcher?.close();
  running.certificateWatcher?.close();
  running.draining = true;
  const { server, grpcServer } = running;
  // Only what listens has clients to drain: a Gatehouse mounted in another app closes at once.
  if (server !== undefined)
    await drainFor([server, https.server, ...additional.servers, grpcServer], options.drainDelayMs, logger);
  await Promise.all([
    server?.close(options.shutdownGraceMs),
    https.server?.close(options.shutdownGraceMs),
    additional.close(options.shutdownGraceMs),
    grpcServer?.stop(),
  ]);
  await parts.reloader.stop();
  await parts.gateway.close();
  await Promise.all([...parts.modules.values()].map(async (m) => m.close?.()));
  // Last: the booking modules answered their last request above.
  await parts.bookings.close();
  // The spans of the last requests go out before the process does.
  await parts.tracing.shutdown();
  logger.info('gatehouse stopped');
}
