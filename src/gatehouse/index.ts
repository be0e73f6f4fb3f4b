/**
 * @module gatehouse
 * A whole Gatehouse from a config folder, as `npm start` runs it and as an
 * embedding app mounts it.
 */
export { createGatehouse, METRICS_PATH, type Gatehouse, type Listening, type ReloadOutcome } from './gatehouse';
export { bookingDatabaseOptions, checkRedisUrl, envPort, resolveOptions, type GatehouseOptions, type ResolvedOptions } from './options';
export { describeStorage, openBookingStorage, type BookingStorage, type BookingStorageOptions } from './bookings';
export { createBuiltinModules, USERS_FILE, type BuiltinModules, type BuiltinOptions } from './builtins';
export { listen, type ListenOptions, type RunningServer, type TlsFiles } from './http-server';
export type { Rejected } from './refusals';
export { listenFailure, readTlsFiles } from './listen-failure';
export { watchFolder, type FolderWatcher, type WatchOptions } from './watch';
export { checkFolderFiles, type ModuleFilesCheck } from './module-files';
