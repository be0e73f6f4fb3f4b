/**
 * @module gatehouse/types
 * What a built Gatehouse is to the app that holds it: its parts, and the
 * handles that start, stop and reload it.
 */
import type Koa from 'koa';
import type { BookingDatabase } from '../bookings';
import type { Gateway, ModuleRegistry } from '../gateway';
import type { Registry } from 'prom-client';
import type { Engine } from '../bookings';
import type { RateLimitGrpcServer, RateLimitStore } from '../ratelimit';
import type { Logger, Metrics } from '../telemetry';
import type { BookingsState } from './bookings-on-demand';
import type { ReloadOutcome } from './folder/reload';
import type { ResolvedOptions } from './options';
import type { Tracing } from '../tracing';

/**
 * What the workers of one gateway share, handed to the Gatehouse of each
 * (see src/workers): a Gatehouse alone has none of them.
 */
export interface SharedParts {
  /** The rate-limit counters every worker counts in. */
  counters?: RateLimitStore;
  /** Reserves the bookings database the gateway's main thread holds, and resolves how to connect to it. */
  bookingEngine?: () => Promise<() => Promise<Engine>>;
  /** The scraped metrics: every worker's, summed. */
  gatherMetrics?: (own: Registry) => Promise<string>;
  /** The main thread watches the folder and reloads every worker alike: this one does not watch it. */
  folderWatchedElsewhere?: boolean;
  /** The version of the files served, which `check_ready` shows: the same in every worker. */
  configVersion?: () => string | undefined;
}

/** Where a started Gatehouse listens. */
export interface Listening {
  /** `http://host:port` or `https://host:port`. */
  url: string;
  port: number;
  /** The HTTPS port, when a Host or TLSContext has a certificate. */
  httpsPort?: number;
  /** The cleartext ports Hosts ask for beside `port` (`requestPolicy.insecure.additionalPort`), when any. */
  additionalPorts?: readonly number[];
  grpcPort?: number;
}

/** A Gatehouse: mount `app` in another Koa app, or `start()` it. */
export interface Gatehouse {
  /** The root Koa app: access log, metrics, then the gateway. */
  readonly app: Koa;
  readonly gateway: Gateway;
  /** Every routable module by name, built-in and registered. */
  readonly modules: ModuleRegistry;
  /** The gRPC rate-limit server, once `start()` has built it (after PORT listens); absent with `grpcPort: false`. */
  readonly grpcServer?: RateLimitGrpcServer;
  /**
   * The bookings database (PostgreSQL or PGlite) once it is open: absent
   * with `bookingStore: 'memory'`, while no Mapping routes to a booking
   * module (none is opened then), and while it opens.
   */
  readonly bookingDatabase?: BookingDatabase;
  /**
   * Where the bookings database is: `none` (memory, or no Mapping routes to
   * a booking module), `opening`, `open`, or `failed` (`check_ready` says why;
   * the next reload that routes to bookings, or {@link openBookings}, tries again).
   */
  readonly bookingsState: BookingsState;
  /**
   * Opens the bookings database unless it is open or opening (a Gatehouse
   * opens it itself only once a Mapping routes to a booking module: an app
   * that calls the booking modules in other ways asks for it here), and
   * resolves it once it is open; `undefined` with `bookingStore: 'memory'`.
   * Rejects when it cannot be opened.
   */
  openBookings(): Promise<BookingDatabase | undefined>;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly options: ResolvedOptions;
  /** Its tracing: off, or sending spans where the `OTEL_*` options or the TracingService say. */
  readonly tracing: Tracing;
  /**
   * Listens for HTTP(S) and gRPC and, unless `watch: false`, watches the config
   * folder. Rejects while started, and once stopped: create another Gatehouse.
   */
  start(): Promise<Listening>;
  /** The HTTPS port while it is open: once a Host or TLSContext has a certificate (see ./https-port). */
  httpsPort(): number | undefined;
  /** The cleartext ports open beside `PORT` for Hosts' `additionalPort` (see ./additional-ports), ascending. */
  additionalPorts(): readonly number[];
  /**
   * Drains (`drainDelayMs`: still serving, not ready, every answer closing
   * its connection), then stops accepting, answers what was sent, lets
   * requests in flight finish, closes gRPC, Redis, the modules and, last,
   * the bookings database; a start under way first finishes.
   */
  stop(): Promise<void>;
  /**
   * Re-reads the config folder: the records and the files of the built-in
   * modules (users, limits, booking data) are all checked first, and a folder
   * with any problem changes nothing. Never rejects for a fault of the
   * folder or of a module: the outcome names it (see ./folder/reload).
   */
  reload(): Promise<ReloadOutcome>;
}
