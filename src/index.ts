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
export { createGateway, loadConfig, ConfigError, type GatehouseModule, type GatewayConfig } from './gateway';
export { createAuthService } from './auth';
export { createRateLimitService, createRateLimitGrpcServer } from './ratelimit';
export { createApiApp, createApiModule, createV1App, createV2App } from './api';
export { createBookingModule, createHotelBookingModule, createCarBookingModule, openBookingDatabase } from './bookings';
export { createDiagModule } from './diag';
