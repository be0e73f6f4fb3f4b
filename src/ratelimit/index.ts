/**
 * @module ratelimit
 * The rate-limit service: limits in envoyproxy/ratelimit's YAML format,
 * counters in memory (one thread's, or shared by the threads of a process)
 * or Redis, a typed in-process face, a gRPC server (both service names,
 * reflection, health) and a gRPC client.
 */
export type {
  CurrentLimit,
  DescriptorEntry,
  DescriptorStatus,
  MetadataValue,
  QuotaModeMetadata,
  RateLimitCode,
  RateLimitDescriptor,
  RateLimiter,
  RateLimitRequest,
  RateLimitResponse,
  RateLimitUnit,
} from './types';
export {
  createRateLimitService,
  UNLIMITED_REMAINING,
  type RateLimitLogger,
  type RateLimitService,
  type RateLimitServiceOptions,
  type RateLimitServiceStats,
} from './service';
export { RateLimitRequestError } from './request-check';
export { DEFAULT_REQUEST_BOUNDS, MAX_DESCRIPTOR_ENTRIES, MAX_DESCRIPTORS, type RequestBounds } from './bounds';
export {
  LimitsConfigError,
  displayPath,
  loadLimitsDir,
  parseLimitsFiles,
  compileDocuments,
  isLimitsFileName,
  LIMITS_FILES,
  LIMITS_FOLDER,
  type LimitsFile,
  type LoadedLimits,
} from './limits/loader';
export { findRule, type LimitRule, type LimitTable } from './limits/index';
export { createLimitTableBuilder, limitEntries, type LimitEntry } from './limits/transfer';
export { RATE_LIMIT_UNITS, UNIT_SECONDS } from './limits/units';
export {
  CallerGoneError,
  StoreTimeoutError,
  type DecideOptions,
  type RateLimitStore,
  type StoreDecision,
  type WindowCheck,
} from './store';
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from './memory-store';
export {
  createSharedCounters,
  createSharedStore,
  releaseAbandonedLock,
  MAX_SHARED_KEYS,
  type SharedCounters,
  type SharedCountersOptions,
  type SharedStoreOptions,
} from './shared/index';
export { createRedisStore, type RedisStore, type RedisStoreOptions, type RedisStoreStats } from './redis/store';
export { DECIDE_SCRIPT } from './redis/script';
export {
  createRateLimitGrpcServer,
  MAX_CONCURRENT_STREAMS,
  MAX_MESSAGE_BYTES,
  MAX_CONNECTIONS,
  REQUEST_TIMEOUT_MS,
  HANDSHAKE_TIMEOUT_MS,
  MAX_INCOMPLETE_REQUESTS,
  IDLE_TIMEOUT_MS,
  KEEPALIVE_TIME_MS,
  type RateLimitGrpcServer,
  type RateLimitGrpcServerOptions,
} from './grpc/server';
export { withinDeadline } from './deadline';
export {
  createRateLimitClient,
  RateLimitCallError,
  type RateLimitClient,
  type RateLimitClientOptions,
} from './grpc/client';
export { createHealthRegistry, type HealthRegistry, type ServingStatus } from './grpc/health';
export { ENVOY_V3_SERVICE, LYFT_SERVICE, HEALTH_SERVICE, PROTO_DIR } from './grpc/protos';
