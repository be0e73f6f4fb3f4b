/**
 * @module gatehouse
 * A whole Gatehouse from a config folder, as `npm start` runs it and as an
 * embedding app mounts it.
 */
export { createGatehouse, type Gatehouse, type Listening, type ReloadOutcome, type SharedParts } from './gatehouse';
export { METRICS_PATH } from './root-app';
export {
  describeRedisUrl,
  isDnsDomain,
  LOG_LEVELS,
  OPTIONS,
  OPTION_VARIABLES,
  OptionError,
  optionsTable,
  resolveOptions,
  type BoundPorts,
  type GatehouseOptions,
  type ResolvedOptions,
} from './options';
export { bindPort, type BoundPort } from '../ports';
export { redisReadiness } from './readiness';
export { describeStorage } from './storage-words';
export { openBookingStorage, type BookingStorage, type BookingStorageOptions } from './bookings';
export type { BookingsState } from './bookings-on-demand';
export { createBuiltinModules, type BuiltinModules, type BuiltinOptions } from './builtins';
export { USERS_FILE } from '../auth';
export {
  DRAIN_DELAY_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  listen,
  type ListenOptions,
  type RunningServer,
} from './serving/http-server';
export type { Rejected, RejectedListener } from './serving/refusals';
export { drainFor, type Drainable, type DrainLog } from './serving/drain';
export { listenFailure } from './serving/listen-failure';
export { bindGatehousePorts, type PortsAt } from './bind-ports';
export { readTlsFiles, type TlsFiles } from './serving/tls-files';
export { watchFolder, type FolderWatcher, type WatchOptions } from './folder/watch';
export {
  loadFolder,
  OFF_THREAD_BYTES,
  MAX_PROBLEMS,
  counted,
  type CheckedFolder,
  type FolderCounts,
  type FolderFile,
  type FolderReport,
  type FolderWants,
  type LoadedFolder,
  type LoadFolderOptions,
} from './folder';
