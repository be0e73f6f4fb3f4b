/**
 * @module gatehouse/gatehouse-reloader
 * The reloader of a Gatehouse: the folder read again and checked, the
 * bookings database reserved when the new records route to it, and tracing
 * following the TracingService once they serve.
 */
import type { GatewayConfig, Gateway, ModuleRegistry } from '../gateway';
import type { Logger, Metrics } from '../telemetry';
import type { Tracing } from '../tracing';
import type { BookingsOnDemand } from './bookings-on-demand';
import type { BuiltinModules } from './builtins';
import type { LoadedFolder, LoadFolderOptions } from './folder';
import { createReloader, type Reloader } from './folder/reload';
import type { ResolvedOptions } from './options';
import { describeTracing, tracingSettings } from './tracing';

/** What the reloader of a Gatehouse works with. */
export interface GatehouseReloaderParts {
  readonly options: ResolvedOptions;
  readonly folder: LoadFolderOptions;
  readonly gateway: Gateway;
  readonly modules: ModuleRegistry;
  readonly builtins: BuiltinModules;
  /** The users file as the start read it. */
  readonly usersText?: string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tracing: Tracing;
  readonly bookings: BookingsOnDemand;
  /** Whether `next` routes to a booking module. */
  readonly wantsBookings: (next: GatewayConfig) => boolean;
  /** Called once new records serve, before tracing follows them. */
  readonly onApplied: (next: GatewayConfig, folder: LoadedFolder) => void;
}

/** Builds the reloader of a Gatehouse. */
export function createGatehouseReloader(parts: GatehouseReloaderParts): Reloader {
  const { options, tracing, logger, bookings, wantsBookings } = parts;
  return createReloader({
    configDir: options.configDir,
    folder: parts.folder,
    gateway: parts.gateway,
    modules: parts.modules,
    builtins: parts.builtins,
    usersText: parts.usersText,
    logger,
    metrics: parts.metrics,
    // A folder another process holds refuses the reload that would open it.
    beforeApply: (next) => (wantsBookings(next) ? bookings.want() : undefined),
    onApplied(next, folder) {
      parts.onApplied(next, folder);
      // A TracingService added, changed or removed: tracing follows it.
      const wasOn = tracing.settings;
      try {
        tracing.configure(tracingSettings(options, next.tracingService));
      } catch (err) {
        logger.error({ err }, 'tracing could not be set up as the TracingService says; tracing stays as it was');
      }
      if (tracing.settings !== wasOn) logger.info({ tracing: describeTracing(tracing.settings) }, 'tracing changed');
    },
    tracing,
  });
}
