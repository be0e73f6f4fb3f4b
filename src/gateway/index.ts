/**
 * @module gateway
 * The gateway: configuration records and their loading, path normalisation,
 * the route table, and the Koa app that routes to in-process modules and
 * remote upstreams behind the auth and rate-limit stages.
 */
export { createGateway, type Gateway, type GatewayOptions, type PreparedConfig } from './gateway';
export {
  loadConfig,
  parseConfigFiles,
  readRecordFiles,
  unreadableFolder,
  isGatewayConfigFile,
  type LoadOptions,
  type ReadOptions,
  type ReadRecordFiles,
  type ConfigFile,
  type LoadedConfig,
} from './config/load';
export type { EmissaryReport, EmissaryRecordReport, SkippedRecord } from './config/emissary';
export { assembleConfig, configFromRecords, RECORD_KINDS, type ConfigResult, type RawRecord } from './config/validate';
export { ConfigError, configProblem, type ConfigProblem, type ProblemLocation } from './config/problems';
export { configWarnings } from './config/warnings';
export { ALIVE_PATH, answerHealth, READY_PATH } from './own-paths';
export {
  API_VERSION,
  mappingSchema,
  authServiceSchema,
  rateLimitServiceSchema,
  moduleSchema,
  recordSchema,
  allowedUpgrades,
  describeLabel,
  groupLabels,
  labelHeaders,
  labelsSchema,
  readLabel,
  type MappingRecord,
  type AuthServiceRecord,
  type RateLimitServiceRecord,
  type ModuleRecord,
  type GatewayRecord,
  type RecordSource,
  type GatewayConfig,
  type AddedHeader,
  type HeaderCondition,
  type LabelGroup,
  type LabelSource,
  type LabelSpecifier,
  type QueryValue,
} from './config/schema';
export { normalisePath, isNormalPath, withoutParameters } from './request/path';
export { RouteTable, rewritePath, type Route, type RouteSpec, type RouteTableOptions } from './match/route-table';
export { describeMatch, sharesOf, sharesOfSteps, type MatchDescription } from './match/describe';
export {
  parseServiceAddress,
  DEFAULT_CLUSTER_DOMAIN,
  systemResolve,
  type ServiceAddress,
  type Resolve,
} from './upstream';
export type { UpstreamOptions } from './runtime';
export { upstreamSettings, upstreamSummary, type UpstreamSettings } from './upstream/describe';
export { DEFAULT_BODY_LIMIT } from './request/body-limit';
export {
  copyData,
  deepFreeze,
  type RouteSnapshot,
  type RuntimeSnapshot,
  type GatewaySnapshot,
  type RejectedConfig,
} from './snapshot';
export { createSliceGate, runAtOnce, sortSteps, type SliceGate, type Steps } from './slices';
export type { StageFactories } from './runtime';
export type { GatehouseModule, ModuleRegistry } from './module';
export type { Stage, StageFactory } from './stages/stage';
export {
  createRateLimitStage,
  RATE_LIMIT_METADATA_STATE,
  type RateLimitStageOptions,
  type RateLimitStageLogger,
} from './stages/ratelimit-stage';
export { createAuthStage, type AuthStageOptions } from './stages/auth-stage';
export { dropClaimedUser } from './request/headers/claimed-user';
export { isLookalike } from './request/headers/lookalike-headers';
export type { StageLogger } from './failure-log';
export {
  NO_EVENTS,
  type GatewayEvents,
  type AuthOutcome,
  type RateLimitOutcome,
  type UpstreamFailure,
  type UpstreamLimit,
} from './events';
