/**
 * @module gateway/module
 * What a built-in module is to the gateway: a name, an HTTP face for
 * in-process routing, and optionally the typed faces of the auth and
 * rate-limit services.
 */
import type Koa from 'koa';
import type { Authenticator } from '../auth';
import type { RateLimiter } from '../ratelimit';

/** A module the gateway can route to without a network hop. */
export interface GatehouseModule extends Partial<Authenticator>, Partial<RateLimiter> {
  /** The name a record's `service` uses for it: `api`, `hotel-booking`, `auth`... */
  readonly name: string;
  /** Its HTTP face: routed to in-process, and served alone by `gatehouse serve`. */
  readonly app?: Koa;
  /**
   * Apps that `app` mounts with koa-mount, by prefix (`/v1`: no trailing
   * slash), each of which answers every request it is given and never
   * passes one back to `app`. Routed in process, a path under one of them
   * (`/v1/...`) runs that app straight, its prefix stripped, as `app`
   * would run it, without the mount in front; any other path goes to `app`.
   */
  readonly mounts?: Readonly<Record<string, Koa>>;
  /** Re-reads its files (users, limits, data) after the config folder changed. */
  reload?(): Promise<void>;
  /** Releases what it holds (timers, connections). */
  close?(): Promise<void>;
}

/** Modules by name. */
export type ModuleRegistry = ReadonlyMap<string, GatehouseModule>;
