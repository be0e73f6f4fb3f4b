/**
 * @module diag
 * The diagnostic UI: what the gateway routes, to which services, with which
 * auth and rate-limit settings, what went wrong in the last config reload,
 * and what it has served. HTML for people, JSON for programs.
 */
export { createDiagModule, type DiagModuleOptions } from './app';
export { renderDiagPage, escapeHtml, formatUptime, PAGE_CSP } from './page';
export { describeServedSteps, type DiagServed } from './describe';
export {
  describeGateway,
  countedSnapshotSteps,
  type DiagMoment,
  type DiagSnapshot,
  type DiagRoute,
  type DiagAuth,
  type DiagRateLimit,
  type DiagConfig,
  type GatewayDescription,
  type ServiceTarget,
} from './snapshot';
