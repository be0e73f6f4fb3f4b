/**
 * @module gatehouse/folder/reload
 * Reloading a running Gatehouse's config folder. Everything is checked
 * before anything is applied: the files read and checked whole (loadFolder, ./index),
 * the route table built (in slices, requests answered meanwhile), the
 * reloads of an embedding app's own modules made. Only then do the records
 * switch, and the built-in modules take the users, limits and data that were
 * checked, not a second reading of their files.
 *
 * Whatever goes wrong at any step (a file that cannot be read or parsed, a
 * module that throws, a fault of the reading itself) is a refused reload
 * naming the file, logged, shown in diag and counted; the last good config
 * keeps serving. A reload never rejects for it, and never ends the process.
 */
import type { BuiltinModules } from '../builtins';
import { errorText } from '../../files';
import {
  ConfigError,
  configProblem,
  configWarnings,
  type ConfigProblem,
  type Gateway,
  type GatewayConfig,
  type ModuleRegistry,
  type PreparedConfig,
} from '../../gateway';
import type { Logger, Metrics } from '../../telemetry';
import { loadFolder, type FolderWants, type LoadedFolder, type LoadFolderOptions } from '.';
import { RELOAD_SPAN, type GatewayTracing } from '../../tracing';

/** What a reload did. */
export type ReloadOutcome = { ok: true } | { ok: false; problems: string[] };

export interface ReloaderOptions {
  configDir: string;
  folder: LoadFolderOptions;
  gateway: Gateway;
  /** Every routable module, the built-in ones and those of an embedding app. */
  modules: ModuleRegistry;
  builtins: BuiltinModules;
  /** The users file as the start read it: a reload that finds it unchanged keeps the cache of verified credentials. */
  usersText?: string;
  logger: Logger;
  metrics: Metrics;
  /**
   * Called with checked records before they serve: a rejection (a resource
   * the new records need cannot be had) refuses the reload, naming why.
   */
  beforeApply?(config: GatewayConfig): Promise<void> | undefined;
  /** Called once new records serve, with the folder they were read from. */
  onApplied(config: GatewayConfig, folder: LoadedFolder): void;
  /** Each reload is a trace of its own, when tracing is on. */
  tracing?: GatewayTracing;
}

/** Reloads, one at a time, and what the last one found. */
export interface Reloader {
  reload(): Promise<ReloadOutcome>;
  /**
   * Calls off the reload under way (its checking thread ends, and it is
   * refused) and every later one; resolves once none is under way. A file
   * that takes the check long never holds a stopping gateway up.
   */
  stop(): Promise<void>;
  readonly lastReloadAt: Date | undefined;
  /** The problems of the last reload, empty once one is applied. */
  readonly configErrors: string[];
}

export function createReloader(options: ReloaderOptions): Reloader {
  const { configDir, gateway, modules, builtins, logger, metrics } = options;
  let usersText = options.usersText;
  let lastReloadAt: Date | undefined;
  let configErrors: string[] = [];
  let reloading: Promise<void> | undefined;
  const stopping = new AbortController();

  const inService = (module: object | undefined) =>
    module !== undefined && [...modules.values()].includes(module as never);
  const bookingsInService = () => builtins.bookings.filter(inService);
  /** The files of the built-in modules still in service (an embedding app may replace one). */
  const wants = (): FolderWants => ({
    records: true,
    users: inService(builtins.auth),
    limits: inService(builtins.rateLimit),
    bookings: builtins.bookingData && bookingsInService().length > 0,
  });
  /** An embedding app's own modules, which read their files themselves. */
  const ownModules = () =>
    [...modules.values()].filter(
      (m) => m.reload !== undefined && ![builtins.auth, builtins.rateLimit, ...builtins.bookings].includes(m as never),
    );

  /** The route table of `config`, or the problems that refuse it. */
  async function prepare(config: GatewayConfig): Promise<PreparedConfig | ConfigProblem[]> {
    try {
      return await gateway.prepare(config);
    } catch (err) {
      if (err instanceof ConfigError) return [...err.problems];
      const problems = [
        configProblem(
          { source: { file: config.sources.join(', ') || configDir } },
          `the routes cannot be built: ${errorText(err)}`,
        ),
      ];
      gateway.reject(problems);
      return problems;
    }
  }

  /** Reloads the embedding app's modules; a module that throws, at once or later, is a problem of that module. */
  async function reloadOwnModules(): Promise<ConfigProblem[]> {
    const problems: ConfigProblem[] = [];
    for (const m of ownModules()) {
      try {
        await Promise.resolve().then(() => m.reload!());
      } catch (err) {
        problems.push(configProblem({ kind: 'module', record: m.name }, errorText(err)));
      }
    }
    return problems;
  }

  /** Hands the checked users, limits and data to the built-in modules; none of it is read again. */
  function applyModuleFiles(folder: LoadedFolder): ConfigProblem[] {
    const problems: ConfigProblem[] = [];
    const apply = (name: string, use: () => void) => {
      try {
        use();
      } catch (err) {
        problems.push(configProblem({ kind: 'module', record: name }, errorText(err)));
      }
    };
    const { auth, rateLimit } = builtins;
    // An unchanged users file keeps the auth service's cache of verified credentials.
    if (auth && folder.users && inService(auth) && folder.usersText !== usersText) {
      apply(auth.name, () => auth.useUsers(folder.users!));
      usersText = folder.usersText;
    }
    if (folder.limits && inService(rateLimit)) apply(rateLimit.name, () => rateLimit.useLimits(folder.limits!));
    if (folder.bookings) for (const m of bookingsInService()) apply(m.name, () => m.useData(folder.bookings!));
    return problems;
  }

  const notReloaded = () => configProblem({ source: { file: configDir } }, 'not reloaded: the gateway is stopping');

  async function apply(): Promise<ConfigProblem[]> {
    if (stopping.signal.aborted) return [notReloaded()];
    const folder = await loadFolder(configDir, wants(), { ...options.folder, signal: stopping.signal });
    // A stop that came while the folder was read or checked on the event loop calls the reload off all the same.
    if (stopping.signal.aborted) return [notReloaded()];
    if (folder.problems.length > 0 || folder.config === undefined) {
      gateway.reject(folder.problems);
      return folder.problems;
    }
    const prepared = await prepare(folder.config);
    if (Array.isArray(prepared)) return prepared;
    try {
      await options.beforeApply?.(folder.config);
    } catch (err) {
      await prepared.discard();
      const problems = [configProblem({ source: { file: configDir } }, errorText(err))];
      gateway.reject(problems);
      return problems;
    }
    const refused = await reloadOwnModules();
    if (refused.length > 0) {
      await prepared.discard();
      gateway.reject(refused);
      return refused;
    }
    gateway.reconfigure(prepared);
    options.onApplied(folder.config, folder);
    for (const warning of [...folder.report.warnings, ...configWarnings(folder.config)])
      logger.warn({ warning }, 'config warning');
    return applyModuleFiles(folder);
  }

  async function reloadOnce(): Promise<ReloadOutcome> {
    lastReloadAt = new Date();
    const span = options.tracing?.requests?.root(RELOAD_SPAN, { 'gatehouse.config_dir': configDir }) ?? null;
    let problems: string[];
    let sources: readonly string[] = [];
    try {
      problems = (await apply()).map((p) => p.text);
      sources = gateway.snapshot().sources;
    } catch (err) {
      // The last resort: a fault no step turned into a problem of its own.
      problems = [configProblem({ source: { file: configDir } }, `the reload failed: ${errorText(err)}`).text];
    }
    configErrors = problems;
    metrics.recordConfigReload(problems.length === 0 ? 'success' : 'failure');
    if (span !== null) {
      span.set('gatehouse.reload.outcome', problems.length === 0 ? 'success' : 'failure');
      span.set('gatehouse.reload.problems', problems.length);
      span.set('gatehouse.reload.routes', gateway.snapshot().routes.length);
      if (problems.length > 0) span.fail('refused', `${problems.length} problem(s); the previous config keeps serving`);
      span.end();
    }
    if (problems.length) logger.error({ problems }, 'config reload refused; the previous config keeps serving');
    // What now serves, for whoever just edited the folder to see that the change is in (the diag page lists the routes).
    else {
      const routes = gateway.snapshot().routes.length;
      // A folder emptied by mistake (its record files removed) is valid, and leaves every request a 404: said louder.
      if (routes === 0)
        logger.warn({ configDir, sources, routes }, 'config reloaded with no routes: every request is answered 404');
      else logger.info({ configDir, sources, routes }, 'config reloaded');
    }
    return problems.length === 0 ? { ok: true } : { ok: false, problems };
  }

  return {
    reload() {
      // Reloads never overlap: a change during one is picked up by the next.
      const run = (reloading ?? Promise.resolve()).then(reloadOnce);
      const tracked: Promise<void> = run.then(
        () => {
          if (reloading === tracked) reloading = undefined;
        },
        () => {
          if (reloading === tracked) reloading = undefined;
        },
      );
      reloading = tracked;
      return run;
    },
    stop() {
      if (reloading && !stopping.signal.aborted)
        logger.info({ configDir }, 'stopping: the reload under way is called off');
      stopping.abort(new Error('the gateway is stopping'));
      return reloading ?? Promise.resolve();
    },
    get lastReloadAt() {
      return lastReloadAt;
    },
    get configErrors() {
      return configErrors;
    },
  };
}
