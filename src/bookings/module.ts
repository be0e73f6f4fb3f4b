/**
 * @module bookings/module
 * The booking services as gateway modules: `hotel-booking` and `car-booking`,
 * one implementation with the item kind as a parameter.
 */
import type Koa from 'koa';
import type { GatehouseModule } from '../gateway';
import { createBookingApp, catalogueOf, type Catalogue } from './app';
import { loadBookingData, loadBookingDataSync, type BookingData } from './data';
import { kindSpec, type BookingKind, type CatalogueItem } from './kinds';
import { createMemoryBookingStore, type BookingStore } from './store';

export interface BookingModuleOptions {
  kind: BookingKind;
  /**
   * Where the app answers. Default: the path as the demo gateway forwards it
   * (`/v1/hotels`, `/v1/cars`); `""` when mounted where the prefix is stripped.
   */
  basePath?: string;
  /**
   * The loaded data file ({@link loadBookingData}); the module takes its
   * kind's catalogue and bookings from it.
   */
  data?: BookingData;
  /**
   * A config folder to read `bookings.yaml` from when `data` is not given,
   * and again on {@link GatehouseModule.reload}.
   */
  configDir?: string;
  /** The catalogue; overrides the one in `data`. Default: empty. */
  catalogue?: readonly CatalogueItem[];
  /** Where bookings are kept. Default: in memory, holding the bookings of `data`. */
  store?: BookingStore;
  /** Trust `X-Forwarded-Proto/-Host` for absolute URLs. Default true: the service sits behind a gateway. */
  proxy?: boolean;
  /** Largest booking request body, in bytes (default 16 KiB). */
  bodyLimit?: number;
  /** The clock of the default store, and the one that says which start days have passed. */
  now?: () => Date;
  /** The largest data file read from `configDir`, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
}

/** A booking service, as the gateway and `gatehouse serve` see it. */
export interface BookingModule extends GatehouseModule {
  readonly name: 'hotel-booking' | 'car-booking';
  readonly kind: BookingKind;
  readonly app: Koa;
  readonly store: BookingStore;
  /** The catalogue it serves now. */
  catalogue(): readonly CatalogueItem[];
  /**
   * Re-reads the catalogue from `configDir` (nothing to do without one). The
   * bookings are live data and stay as they are. A broken file is rejected
   * and the old catalogue kept.
   */
  reload(): Promise<void>;
  /**
   * Serves the catalogue of data already read and checked (by a folder
   * check that read the file once); the bookings stay as they are. Nothing
   * changes when the catalogue was given in code.
   */
  useData(data: BookingData): void;
}

/** Builds the booking service of one kind. */
export function createBookingModule(options: BookingModuleOptions): BookingModule {
  const spec = kindSpec(options.kind);
  const data =
    options.data ??
    (options.configDir !== undefined ? loadBookingDataSync(options.configDir, options.fileSizeLimit) : undefined);
  let current: Catalogue = catalogueOf(options.catalogue ?? data?.[spec.catalogueKey] ?? []);
  const store = options.store ?? createMemoryBookingStore({ bookings: data?.[spec.bookingsKey], now: options.now });

  const app = createBookingApp({
    spec,
    basePath: options.basePath ?? spec.defaultBasePath,
    store,
    catalogue: () => current,
    proxy: options.proxy ?? true,
    bodyLimit: options.bodyLimit,
    now: options.now,
  });

  return {
    name: spec.moduleName,
    kind: spec.kind,
    app,
    store,
    catalogue: () => current.items,
    async reload() {
      if (options.configDir === undefined || options.catalogue !== undefined) return;
      const fresh = await loadBookingData(options.configDir, options.fileSizeLimit);
      current = catalogueOf(fresh[spec.catalogueKey]);
    },
    useData(fresh) {
      if (options.catalogue === undefined) current = catalogueOf(fresh[spec.catalogueKey]);
    },
  };
}

/** The hotel booking service (`hotel-booking`, at `/v1/hotels` by default). */
export function createHotelBookingModule(options: Omit<BookingModuleOptions, 'kind'> = {}): BookingModule {
  return createBookingModule({ ...options, kind: 'hotel' });
}

/** The car booking service (`car-booking`, at `/v1/cars` by default). */
export function createCarBookingModule(options: Omit<BookingModuleOptions, 'kind'> = {}): BookingModule {
  return createBookingModule({ ...options, kind: 'car' });
}
