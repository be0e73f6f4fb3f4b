/**
 * @module cli/check
 * `gatehouse check [dir]`: everything a start would read from a config folder,
 * validated without listening, and the route table it would serve.
 */
import { resolve } from 'node:path';
import { createDiagModule } from '../diag';
import { DEFAULT_FILE_SIZE_LIMIT, errorText, fileSystemSource } from '../files';
import { createBuiltinModules, loadFolder } from '../gatehouse';
import { ConfigError, createGateway, upstreamSummary, type GatehouseModule, type RouteSnapshot } from '../gateway';
import { createLogger } from '../telemetry';
import { emissaryReportText } from './check-emissary';
import { countsText, filesText } from './check-files';

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
 * The headers and query arguments a route requires: `name="value"` for an
 * exact value, the bare name for any value, `name~"pattern"` for a pattern,
 * query arguments after `?`, so that two routes on one prefix that differ
 * only there read differently.
 */
function headersOf(route: RouteSnapshot): string {
  const condition = (name: string, value: string | true, pattern = false) =>
    value === true ? name : `${name}${pattern ? '~' : '='}${JSON.stringify(value)}`;
  const all = [
    ...Object.entries(route.headers ?? {}).map(([name, value]) => condition(name, value)),
    ...Object.entries(route.regex_headers ?? {}).map(([name, value]) => condition(name, value, true)),
    ...Object.entries(route.query_parameters ?? {}).map(([name, value]) => `?${condition(name, value)}`),
    ...Object.entries(route.regex_query_parameters ?? {}).map(([name, value]) => `?${condition(name, value, true)}`),
  ];
  return all.length > 0 ? all.join(',') : '-';
}

/**
 * The service a route forwards to, with the Host it is sent, the upgrades it
 * tunnels, its share of a match it shares, and its upstream cluster and
 * settings; or the redirect it answers.
 */
function serviceOf(route: RouteSnapshot): string {
  let text = route.service;
  if (route.redirect !== undefined) {
    const r = route.redirect;
    const path =
      r.path_redirect ??
      (r.prefix_redirect !== undefined
        ? `prefix ${r.prefix_redirect}`
        : r.regex_redirect
          ? `${r.regex_redirect.pattern} -> ${r.regex_redirect.substitution}`
          : '');
    return `${text} (${r.response_code}${path && ` ${path}`})`;
  }
  if (route.host_rewrite !== undefined) text += ` (Host: ${route.host_rewrite})`;
  if (route.allow_upgrade !== undefined) text += ` (upgrades: ${route.allow_upgrade.join(',')})`;
  if (route.share !== undefined)
    text += ` (${route.weight === undefined ? '' : `weight ${route.weight}: `}${route.share}%)`;
  if (route.cluster !== undefined) text += ` -> ${route.cluster}`;
  if (route.upstream !== undefined) text += ` (${upstreamSummary(route.upstream)})`;
  return text;
}

/** The prefix, marked when it is a pattern, an exact path, matched in any case, or lets unsafe escapes through. */
function prefixOf(route: RouteSnapshot): string {
  const unsafe = route.allow_unsafe_path_escapes ? ' (unsafe escapes)' : '';
  if (route.prefix_regex) return `${route.prefix} (regex)${unsafe}`;
  return `${route.prefix}${route.prefix_exact ? ' (exact)' : ''}${route.case_sensitive === false ? ' (any case)' : ''}${unsafe}`;
}

/** The path a route forwards, as its rewrite says. */
function rewriteOf(route: RouteSnapshot): string {
  if (route.redirect !== undefined) return '-';
  if (route.regex_rewrite) return `${route.regex_rewrite.pattern} -> ${route.regex_rewrite.substitution}`;
  return route.rewrite === '' ? '""' : route.rewrite;
}

/** Formats routes in match order as a table. */
export function routeTable(routes: readonly RouteSnapshot[]): string {
  const header = [
    'PRECEDENCE',
    'PREFIX',
    'METHOD',
    'HEADERS',
    'HOST',
    'SERVICE',
    'TARGET',
    'REWRITE',
    'AUTH',
    'LABELS',
    'NAME',
  ];
  const rows = routes.map((r) => [
    String(r.precedence),
    prefixOf(r),
    r.method === undefined ? '*' : `${r.method}${r.method_regex ? ' (regex)' : ''}`,
    headersOf(r),
    r.hostname === undefined ? '*' : `${r.hostname}${r.host_regex ? ' (regex)' : ''}`,
    serviceOf(r),
    r.target,
    rewriteOf(r),
    r.bypass_auth ? 'bypass' : 'required',
    labelsOf(r),
    r.name,
  ]);
  // A line break or tab in a name or a prefix would break the table's rows and columns: each cell is one line.
  for (const row of rows)
    for (let i = 0; i < row.length; i++)
      row[i] = row[i].replace(/[\n\r\t]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** How {@link checkFolder} reads the folder. */
export interface CheckFolderOptions {
  /** The largest file read, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
  /** This gateway's `ambassador_id`: the records served are those that name it. Default `default`. */
  ambassadorId?: string;
}

/** Validates a config folder as `start` would read it. */
export async function checkFolder(dir: string, options: CheckFolderOptions = {}): Promise<CheckReport> {
  const configDir = resolve(dir);
  const fileSizeLimit = options.fileSizeLimit ?? DEFAULT_FILE_SIZE_LIMIT;
  const files = await loadFolder(
    configDir,
    { records: true, limits: true, users: 'present', bookings: 'present' },
    { source: fileSystemSource, fileSizeLimit, ambassadorId: options.ambassadorId },
  );
  const warnings = files.warnings.map((w) => `warning: ${w}\n`).join('') + emissaryReportText(files.emissary);
  if (files.problems.length > 0 || files.config === undefined)
    return { ok: false, text: `${files.problems.map((p) => p.text).join('\n')}\n${warnings}` };

  let modules: GatehouseModule[];
  try {
    modules = createBuiltinModules({
      configDir,
      logger: createLogger({ level: 'silent' }),
      files,
      fileSizeLimit,
    }).modules;
  } catch (err) {
    return { ok: false, text: `${errorText(err)}\n` };
  }
  const registry = new Map(modules.map((m) => [m.name, m]));
  // The page is never asked for here: routing needs the module, not a snapshot.
  registry.set('diag', createDiagModule({ snapshot: () => Promise.reject(new Error('not running')) }));
  try {
    const gateway = createGateway({ config: files.config, modules: registry });
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
    const folder = `${filesText(files.report)}\n${countsText(files.report.counts)}`;
    return {
      ok: true,
      text: `${configDir}: OK\n\n${folder}\n${routes}\n${services.length ? `\n${services.join('\n')}\n` : ''}${warnings && `\n${warnings}`}`,
    };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, text: `${err.problems.map((p) => p.text).join('\n')}\n` };
    throw err;
  } finally {
    await Promise.all(modules.map(async (m) => m.close?.()));
  }
}
