/**
 * @module api
 * The versioned messages API: a dispatcher over isolated v1 and v2 apps, and
 * the module the gateway routes to in-process.
 */
import type { GatehouseModule } from '../gateway';
import { buildApi } from './dispatcher';
import type { ApiDeps } from './types';

export { buildApi, createApiApp, type BuiltApi, type VersionFactories } from './dispatcher';
export { createV1App, v1 } from './v1';
export { createV2App, v2 } from './v2';
export { createVersionApp } from './version-app';
export { createMessageStore, demoData } from './store';
export type { AccountRecord, MessageRecord, MessageStore, MessageStoreData } from './store';
export type { ApiDeps, ApiVersion, Link, MessageRepresentation } from './types';

/**
 * The API as a Gatehouse module named `api`. Its version apps answer every
 * request they are given (each ends with its own 404), so the gateway may
 * enter them straight.
 */
export function createApiModule(deps: ApiDeps = {}): GatehouseModule {
  const { app, versions } = buildApi(deps);
  return { name: 'api', app, mounts: versions };
}
