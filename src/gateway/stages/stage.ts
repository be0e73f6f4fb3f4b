/**
 * @module gateway/stages/stage
 * A step a routed request passes before it is forwarded: the auth check and
 * the rate-limit check are stages, built from their config records.
 */
import type { Context } from 'koa';
import type { MappingRecord } from '../config/schema';
import type { GatewayEvents } from '../events';
import type { StageLogger } from '../failure-log';
import type { ChannelCredentials } from '@grpc/grpc-js';
import type { ModuleRegistry } from '../module';

export interface Stage {
  /**
   * Runs for a request that matched `mapping`. Resolves `true` to let it go on,
   * `false` when the stage has written the response itself (a 401 from the
   * auth service, a 429). May throw an HttpError. `cluster` is the name of
   * the cluster a remote upstream is reached through (`cluster_quote_shop`),
   * as Envoy's `destination_cluster` names it; undefined for a module called
   * in process and a redirect, which have none.
   */
  run(ctx: Context, mapping: MappingRecord, cluster?: string): boolean | Promise<boolean>;
  /** Releases connections and pools. */
  close?(): Promise<void>;
}

/** What the gateway tells every stage it builds: where to report its decisions, and the gateway's own settings. */
export interface StageSettings extends GatewayEvents {
  /** The gateway's own name, for `source_cluster` rate-limit labels. */
  readonly sourceCluster?: string;
  /** The Module's `suppress_envoy_headers`: no `x-envoy-ratelimited` on a 429. */
  readonly suppressEnvoyHeaders?: boolean;
}

/**
 * Builds a stage from its record; `modules` resolves built-in service names,
 * `events` receives the stage's decisions and carries the gateway's
 * settings (the gateway always passes one).
 */
export type StageFactory<R> = (record: R, modules: ModuleRegistry, events?: StageSettings) => Stage;

/** The auth stage's options; a {@link GatewayEvents} fits as it is (the gateway passes its events here). */
export interface AuthStageOptions extends GatewayEvents {
  /** Where a failing auth service is reported (once per burst of failures). */
  logger?: StageLogger;
  /** Clock in ms, for the failure log's pacing. */
  now?: () => number;
  /**
   * How the channel to an auth service with `proto: grpc` is secured, as a
   * TLSContext gives it; default: as the record's `tls` and address say.
   */
  credentials?: ChannelCredentials;
}
