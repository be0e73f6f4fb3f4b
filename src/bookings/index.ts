/**
 * @module bookings
 * The hotel and car booking services: catalogues, and bookings that belong to
 * the user the gateway names in `X-Travel-User`. One implementation, with the
 * kind of item as a parameter.
 */
export {
  createBookingModule,
  createHotelBookingModule,
  createCarBookingModule,
  type BookingModule,
  type BookingModuleOptions,
} from './module';
export {
  createBookingApp,
  catalogueOf,
  normaliseBasePath,
  USER_HEADER,
  DEFAULT_BOOKING_BODY_LIMIT,
  type BookingAppOptions,
  type Catalogue,
} from './app';
export {
  loadBookingData,
  loadBookingDataSync,
  parseBookingData,
  parseBookingFile,
  BookingDataError,
  BOOKINGS_FILE,
  type BookingData,
} from './data';
export { createMemoryBookingStore, type Booking, type BookingDraft, type BookingStatus, type BookingStore, type MemoryBookingStoreOptions } from './store';
export { KINDS, BOOKING_KINDS, kindSpec, type BookingKind, type CatalogueItem, type KindSpec } from './kinds';
