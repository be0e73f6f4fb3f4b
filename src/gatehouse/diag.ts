/**
 * @module gatehouse/diag
 * The diag module of a Gatehouse. What the served configuration shows (its
 * routes in match order, its services) is described once for each
 * configuration, in slices, the views that ask meanwhile waiting for the
 * one description; each view adds its counts, times and last reload to it.
 * Everything a view shows is read in one go when it is asked for, so that
 * it shows one configuration whole even when a reload switches it while
 * the page is written.
 */
import {
  countedSnapshotSteps,
  createDiagModule,
  describeServedSteps,
  trafficOf,
  type DiagDependency,
  type DiagFolder,
  type DiagServed,
} from '../diag';
import { createSliceGate, sortSteps, type GatehouseModule, type GatewayConfig, type Steps } from '../gateway';
import type { RequestCounts, RouteCounters } from '../telemetry';

/** What serves, read together: the configuration, when it was loaded, and its route table's routes (in match order). */
export interface Serving {
  config: GatewayConfig;
  loadedAt: Date;
  routes: readonly { readonly name: string }[];
}

export interface GatehouseDiagOptions {
  version: string;
  startedAt: Date;
  configDir: string;
  /** What serves now. */
  serving(): Serving;
  /** The last reload: when it was tried, and its problems (none once one is applied). */
  lastReload(): { at?: Date; problems: readonly string[] };
  /** The services served in process. */
  modules: { has(name: string): boolean };
  counters: RouteCounters;
  /** How the dependencies are now. */
  dependencies?: () => Promise<DiagDependency[]>;
  /** The config folder as the serving configuration was read. */
  folder?: () => DiagFolder | undefined;
}

/** `config` with its Mappings in the order of `routes` (the route table's), a step a route and a few merged. */
function* inMatchOrderSteps(config: GatewayConfig, routes: Serving['routes']): Steps<GatewayConfig> {
  const order = new Map<string, number>();
  for (let i = 0; i < routes.length; i++) {
    order.set(routes[i].name, i);
    yield;
  }
  const mappings = yield* sortSteps(config.mappings, (a, b) => (order.get(a.name) ?? 0) - (order.get(b.name) ?? 0));
  return { ...config, mappings };
}

/** Builds the diag module of a Gatehouse. */
export function createGatehouseDiag(options: GatehouseDiagOptions): GatehouseModule {
  const { counters, modules } = options;
  // The description of each configuration, or the one under way, for as long as the configuration lives.
  const described = new WeakMap<GatewayConfig, Promise<DiagServed>>();
  // The views under way, their descriptions and pages, share one slice of the event loop a turn.
  const slices = createSliceGate();

  function describe({ config, routes }: Serving): Promise<DiagServed> {
    let served = described.get(config);
    if (served === undefined) {
      const made = slices.run(
        (function* () {
          return yield* describeServedSteps(yield* inMatchOrderSteps(config, routes), modules);
        })(),
      );
      // A description that failed is not kept: the next view tries again.
      made.catch(() => {
        if (described.get(config) === made) described.delete(config);
      });
      described.set(config, (served = made));
    }
    return served;
  }

  return createDiagModule({
    slices,
    async snapshot() {
      // Asked first: Redis and the database may take the readiness timeout to answer.
      const dependencies = await options.dependencies?.();
      const serving = options.serving();
      const reload = options.lastReload();
      const now = new Date();
      const totals = counters.totals();
      const counts = new Map<string, RequestCounts>();
      for (const [route, seen] of counters.entries()) counts.set(route, { ...seen });
      const moment = {
        version: options.version,
        startedAt: options.startedAt,
        now,
        configDir: options.configDir,
        loadedAt: serving.loadedAt,
        configErrors: [...reload.problems],
        lastReloadAt: reload.at,
        totals,
        dependencies,
        traffic: trafficOf(counters),
        folder: options.folder?.(),
      };
      return slices.run(countedSnapshotSteps(await describe(serving), moment, (route) => counts.get(route)));
    },
  });
}
