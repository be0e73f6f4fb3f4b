/**
 * @module cli/check
 * `gatehouse check [dir]`: everything a start would read from a config folder,
 * validated without listening, and the route table it would serve.
 */
import { resolve } from 'node:path';
import { createDiagModule } from '../diag';
import { checkFolderFiles, createBuiltinModules } from '../gatehouse';
import { ConfigError, createGateway, loadConfig, upstreamSummary, type GatehouseModule, type RouteSnapshot } from '../gateway';
import { createLogger } from '../telemetry';

export interface CheckReport {
  ok: boolean;
  /** The route table, or one line per problem. */
  text: string;
}

function labelsOf(route: RouteSnapshot): string {
  if (!route.labels) return '-';
  return Object.entries(route.labels)
    .map(([domain, groups]) => `${domain}:${groups.length}`)
    .join(',');
}

/**
 * The headers a route requires: `name="value"` for an exact value, the bare
 * name for any value, so that two routes on one prefix that differ only there
 * read differently.
 */
function headersOf(route: RouteSnapshot): string {
  if (!route.headers) return '-';
  return Object.entries(route.headers)
    .map(([name, condition]) => (condition === true ? name : `${name}=${JSON.stringify(condition)}`))
    .join(',');
}

/** The service a route forwards to, with the Host it is sent, the upgrades it tunnels, and its upstream cluster and settings. */
function serviceOf(route: RouteSnapshot): string {
  let text = route.service;
  if (route.host_rewrite !== undefined) text += ` (Host: ${route.host_rewrite})`;
  if (route.allow_upgrade !== undefined) text += ` (upgrades: ${route.allow_upgrade.join(',')})`;
  if (route.cluster !== undefined) text += ` -> ${route.cluster}`;
  if (route.upstream !== undefined) text += ` (${upstreamSummary(route.upstream)})`;
  return text;
}

/** Formats routes in match order as a table. */
export function routeTable(routes: readonly RouteSnapshot[]): string {
  const header = ['PRECEDENCE', 'PREFIX', 'METHOD', 'HEADERS', 'HOST', 'SERVICE', 'TARGET', 'REWRITE', 'AUTH', 'LABELS', 'NAME'];
  const rows = routes.map((r) => [
    String(r.precedence),
    r.case_sensitive === false ? `${r.prefix} (any case)` : r.prefix,
    r.method ?? '*',
    headersOf(r),
    r.hostname ?? '*',
    serviceOf(r),
    r.target,
    r.rewrite === '' ? '""' : r.rewrite,
    r.bypass_auth ? 'bypass' : 'required',
    labelsOf(r),
    r.name,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

/** Validates a config folder as `start` would read it. */
export async function checkFolder(dir: string): Promise<CheckReport> {
  const configDir = resolve(dir);
  const loaded = await loadConfig(configDir);
  const files = await checkFolderFiles(configDir);
  const problems = [...(loaded.ok ? [] : loaded.problems), ...files.problems];
  const warnings = files.warnings.map((w) => `warning: ${w}\n`).join('');
  if (!loaded.ok || problems.length > 0) return { ok: false, text: `${problems.map((p) => p.text).join('\n')}\n${warnings}` };

  let modules: GatehouseModule[];
  try {
    modules = createBuiltinModules({ configDir, logger: createLogger({ level: 'silent' }) }).modules;
  } catch (err) {
    return { ok: false, text: `${(err as Error).message}\n` };
  }
  const registry = new Map(modules.map((m) => [m.name, m]));
  // The page is never asked for here: routing needs the module, not a snapshot.
  registry.set('diag', createDiagModule({ snapshot: () => Promise.reject(new Error('not running')) }));
  try {
    const gateway = createGateway({ config: loaded.config, modules: registry });
    const snapshot = gateway.snapshot();
    await gateway.close();
    const routes = snapshot.routes.length
      ? routeTable(snapshot.routes)
      : "no Mapping records: every path but the gateway's own (/gateway/v0/check_alive, ...) answers 404";
    const services = [
      snapshot.authService && `auth: ${snapshot.authService.name} -> ${snapshot.authService.auth_service}`,
      snapshot.rateLimitService &&
        `rate limits: ${snapshot.rateLimitService.name} -> ${snapshot.rateLimitService.service} (domain ${snapshot.rateLimitService.domain})`,
    ].filter(Boolean);
    return {
      ok: true,
      text: `${configDir}: OK\n\n${routes}\n${services.length ? `\n${services.join('\n')}\n` : ''}${warnings && `\n${warnings}`}`,
    };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, text: `${err.problems.map((p) => p.text).join('\n')}\n` };
    throw err;
  } finally {
    await Promise.all(modules.map((m) => m.close?.()));
  }
}
