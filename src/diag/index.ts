/**
 * @module diag
 * The diagnostic UI: what the gateway routes, to which services, with which
 * auth and rate-limit settings, what went wrong in the last config reload,
 * and what it has served. HTML for people, JSON for programs.
 */
export { createDiagModule, type DiagModuleOptions } from './app';
export { renderDiagPage, escapeHtml, formatUptime, PAGE_CSP } from './page';
export { countsText } from './sections';
export { describeServedSteps, type DiagServed } from './describe';
export {
  describeGateway,
  countedSnapshotSteps,
  type DiagExtras,
  type DiagFolder,
  type DiagMoment,
  type GatewayDescription,
} from './snapshot';
export { trafficOf, TRAFFIC_ROUTES } from './traffic';
export type {
  DependencyState,
  DiagAuth,
  DiagConfig,
  DiagCounts,
  DiagDependency,
  DiagFile,
  DiagRateLimit,
  DiagRoute,
  DiagSnapshot,
  DiagTraffic,
  DiagTrafficSeries,
  ServiceTarget,
} from './types';
