/**
 * @module gatehouse
 * The library: `createGatehouse(options)` for the whole gateway, and each
 * module's factory for using one alone or building another arrangement.
 */
export * from './gatehouse';
export * as http from './http';
export * as gateway from './gateway';
export * as auth from './auth';
export * as ratelimit from './ratelimit';
export * as api from './api';
export * as bookings from './bookings';
export * as diag from './diag';
export * as cors from './cors';
export * as telemetry from './telemetry';
export * as tracing from './tracing';
export {
  createGateway,
  loadConfig,
  ConfigError,
  RATE_LIMIT_METADATA_STATE,
  type Gateway,
  type GatewayOptions,
  type GatehouseModule,
  type GatewayConfig,
} from './gateway';
export { createAuthService, type AuthService, type AuthServiceOptions } from './auth';
export {
  createRateLimitService,
  createRateLimitGrpcServer,
  type RateLimitService,
  type RateLimitServiceOptions,
  type RateLimitGrpcServer,
  type RateLimitGrpcServerOptions,
  type QuotaModeMetadata,
  type MetadataValue,
  type RateLimiter,
} from './ratelimit';
export { createApiApp, createApiModule, createV1App, createV2App, type ApiDeps } from './api';
export {
  createBookingModule,
  createHotelBookingModule,
  createCarBookingModule,
  openBookingDatabase,
  type BookingModule,
  type BookingModuleOptions,
  type BookingDatabase,
  type BookingDatabaseOptions,
} from './bookings';
export { createDiagModule, type DiagModuleOptions } from './diag';
export { createServiceApp, type ServiceAppOptions } from './http';
export { createTracing, type Tracing, type TracingSettings } from './tracing';
