/**
 * @module diag/snapshot
 * How a running gateway is described for the diagnostic page (./types):
 * what its configuration serves (./describe), and what each view adds to
 * that, its counts and times.
 */
import { runAtOnce, type GatewayConfig, type Steps } from '../gateway';
import type { RequestCounts, RouteCounters } from '../telemetry';
import { describeServedSteps, type DiagServed } from './describe';
import type {
  DiagCertificate,
  DiagCounts,
  DiagDependency,
  DiagFile,
  DiagRoute,
  DiagSnapshot,
  DiagTraffic,
} from './types';

/** The config folder as the serving configuration was read: its entries, and what it holds in all. */
export interface DiagFolder {
  files: DiagFile[];
  /** Entries left out of `files`. */
  more?: number;
  counts: DiagCounts;
  /** What a file was read as that its name or content says otherwise. */
  warnings?: string[];
}

/** What a gateway says of itself besides its configuration: its dependencies, its traffic, its folder. */
export interface DiagExtras {
  dependencies?: DiagDependency[];
  traffic?: DiagTraffic;
  folder?: DiagFolder;
}

/** What a gateway knows of itself, for {@link describeGateway}. */
export interface GatewayDescription extends DiagExtras {
  version: string;
  startedAt: Date;
  /** The serving configuration; its `mappings` in match order (the route table's order). */
  config: GatewayConfig;
  configDir: string;
  loadedAt: Date;
  /** The problems of the last rejected reload. */
  configErrors?: readonly string[];
  lastReloadAt?: Date;
  /** The built-in services: a record naming one of these is served in process. */
  modules: { has(name: string): boolean };
  counters?: RouteCounters;
  /** Default: now. */
  now?: Date;
}

/** Builds the snapshot of a gateway, at once (see {@link describeServedSteps} and {@link countedSnapshotSteps} for one in slices). */
export function describeGateway(d: GatewayDescription): DiagSnapshot {
  const served = runAtOnce(describeServedSteps(d.config, d.modules));
  const counters = d.counters;
  const moment: DiagMoment = { ...d, now: d.now ?? new Date(), totals: counters?.totals() };
  return runAtOnce(countedSnapshotSteps(served, moment, counters && ((route) => counters.get(route))));
}

/** What a view of the page shows besides what the configuration serves: the times, the last reload, the totals. */
export interface DiagMoment extends DiagExtras {
  version: string;
  startedAt: Date;
  now: Date;
  configDir: string;
  /** When the configuration described was loaded. */
  loadedAt: Date;
  configErrors?: readonly string[];
  lastReloadAt?: Date;
  /** Default: zeros. */
  totals?: Readonly<RequestCounts>;
  /** The certificates the configuration has in service. */
  certificates?: readonly DiagCertificate[];
}

/**
 * The snapshot of `served` at `moment`, each route with its counts
 * (`countsOf` its name; none, zeros). A route that counted nothing is the
 * frozen one of `served` itself, so that the page can keep what it renders
 * of it; a step a route (see ../gateway/slices).
 */
export function* countedSnapshotSteps(
  served: DiagServed,
  moment: DiagMoment,
  countsOf?: (route: string) => Readonly<RequestCounts> | undefined,
): Steps<DiagSnapshot> {
  const routes: DiagRoute[] = [];
  for (const route of served.routes) {
    const counts = countsOf?.(route.name);
    const counted = counts !== undefined && (counts.requests !== 0 || counts.errors !== 0 || counts.clientErrors !== 0);
    // Assigned over the spread, the counts keep their place among the fields (and in the JSON).
    routes.push(
      counted
        ? { ...route, requests: counts.requests, errors: counts.errors, clientErrors: counts.clientErrors }
        : route,
    );
    yield;
  }
  const { startedAt, now } = moment;
  const snapshot: DiagSnapshot = {
    version: moment.version,
    startedAt: startedAt.toISOString(),
    uptimeSeconds: Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000)),
    ...(moment.dependencies ? { dependencies: moment.dependencies } : {}),
    ...(moment.traffic ? { traffic: moment.traffic } : {}),
    routes,
    config: {
      dir: moment.configDir,
      sources: [...served.sources],
      loadedAt: moment.loadedAt.toISOString(),
      errors: [...(moment.configErrors ?? [])],
    },
    counters: moment.totals ? { ...moment.totals } : { requests: 0, errors: 0, clientErrors: 0 },
  };
  if (moment.lastReloadAt) snapshot.config.lastReloadAt = moment.lastReloadAt.toISOString();
  const folder = moment.folder;
  if (folder) {
    snapshot.config.files = folder.files;
    if (folder.more) snapshot.config.moreFiles = folder.more;
    snapshot.config.counts = folder.counts;
    if (folder.warnings?.length) snapshot.config.warnings = [...folder.warnings];
  }
  if (served.auth)
    snapshot.auth = {
      ...served.auth,
      allowed_authorization_headers: [...served.auth.allowed_authorization_headers],
      allowed_request_headers: [...served.auth.allowed_request_headers],
    };
  if (served.rateLimit) snapshot.rateLimit = { ...served.rateLimit };
  if (moment.certificates?.length) snapshot.certificates = moment.certificates.map((c) => ({ ...c }));
  return snapshot;
}
