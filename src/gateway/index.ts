/**
 * @module gateway
 * The gateway: configuration records and their loading, and the Koa app that
 * routes to in-process modules and remote upstreams behind the auth and
 * rate-limit stages. What the rest of the project and the library's users
 * need of it; the matching, the request checks and the upstream pools stay
 * inside.
 */
export { createGateway, type Gateway, type GatewayOptions, type PreparedConfig, type UpstreamHealth } from './gateway';
export type { GatehouseModule, ModuleRegistry } from './module';
export type { StageFactories, UpstreamOptions } from './types';
export type { Resolve } from './upstream';
export type { GatewayEvents } from './events';

// Configuration: loading, records written in code, problems and warnings.
export { loadConfig, parseConfigFiles, type LoadedConfig, type LoadOptions } from './config/load';
export {
  isGatewayConfigFile,
  readRecordFiles,
  unreadableFolder,
  type ConfigFile,
  type ReadOptions,
  type ReadRecordFiles,
} from './config/record-files';
export type { EmissaryRecordReport, EmissaryReport, SkippedRecord } from './config/emissary';
export { documentShape, documentWhat, shapeText, type DocumentShape, type IgnoredDocument } from './config/documents';
export { configFromRecords, type ConfigResult } from './config/validate';
export { ConfigError, configProblem, type ConfigProblem, type ProblemLocation } from './config/problems';
export { configWarnings } from './config/warnings';
export {
  allowedUpgrades,
  describeLabel,
  groupLabels,
  readLabel,
  type AuthServiceRecord,
  type GatewayConfig,
  type GatewayRecord,
  type HeaderCondition,
  type LabelSpecifier,
  type MappingRecord,
  type RateLimitServiceRecord,
  type RecordSource,
  type TracingServiceRecord,
} from './config/schema';

// TLS as the configuration serves it: certificates by name, Hosts, TLS to upstreams.
export type { CertificateInService, CertificateRole, GatewayTls, TlsReadOptions } from './tls';

// The gateway's own paths, which the standalone services answer too.
export { ALIVE_PATH, answerHealth, HEALTH_ROUTE, READY_PATH } from './own-paths';

// The stages, for an app that builds its own or tunes the project's.
export type { Stage, StageFactory } from './stages/stage';
export { createAuthStage, type AuthStageOptions } from './stages/auth-stage';
export { createRateLimitStage, RATE_LIMIT_METADATA_STATE, type RateLimitStageOptions } from './stages/ratelimit-stage';
export { dropClaimedUser } from './request/headers/claimed-user';

// What is served, described: the snapshot, and what diag shows of routes and upstreams.
export { copyData, deepFreeze, type GatewaySnapshot, type RouteSnapshot } from './snapshot';
export { describeMatch, sharesOfSteps, type MatchDescription } from './match/describe';
export { upstreamSettings, upstreamSummary, type UpstreamSettings } from './upstream/describe';

// Work done a slice at a time, so that a large configuration does not hold up requests.
export { createSliceGate, runAtOnce, sortSteps, type SliceGate, type Steps } from './slices';
