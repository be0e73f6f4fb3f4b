/**
 * @module ratelimit/service
 * The rate-limit service's typed face: finds the rule of every descriptor of
 * a request, checks them all at once against the store, and answers like
 * envoyproxy/ratelimit. One difference, on purpose: a refused request counts
 * nowhere, so it does not use up the quota of its other descriptors (Envoy's
 * service increments every counter, refused or not). Within a request the
 * descriptors count in order, as Envoy's do: one listed twice sees the hits
 * of the first.
 */
import pino from 'pino';
import { errorText } from '../files';
import { checkBound, DEFAULT_REQUEST_BOUNDS, type RequestBounds } from './bounds';
import { counterKey } from './counter-key';
import type { LimitTable } from './limits/index';
import { compileDocumentsWithWarnings, loadLimitsDir, type CompiledLimits, type LoadedLimits } from './limits/loader';
import { createMemoryStore } from './memory-store';
import { checkedDescriptors } from './request-check';
import { rulesOf } from './request-rules';
import { respond } from './response';
import {
  CallerGoneError,
  type DecideOptions,
  type RateLimitStore,
  type StoreDecision,
  type WindowCheck,
} from './store';
import type { DescriptorStatus, RateLimiter, RateLimitRequest, RateLimitResponse } from './types';

export { RateLimitRequestError } from './request-check';

/** The logging this service does: pino's shape, so a pino logger fits. */
export interface RateLimitLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RateLimitServiceOptions {
  /** The config folder: its `ratelimit.yaml`, or every YAML file of its `ratelimit/` folder. */
  limitsDir?: string;
  /** Limits documents given in code (as parsed from YAML), used when there is no `limitsDir`. */
  limits?: readonly unknown[];
  /** The limits of `limitsDir` already read (by a folder check): not read again at start. */
  loaded?: LoadedLimits;
  /** The largest limits file `reload()` reads, in bytes. Default 8 MiB. */
  fileSizeLimit?: number;
  /** Where counters live. Default: a memory store. The service closes it on `close()`. */
  store?: RateLimitStore;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** The module name records use. Default `ratelimit`. */
  name?: string;
  logger?: RateLimitLogger;
  /** Most descriptors one request may carry. Default {@link MAX_DESCRIPTORS} (1000). */
  maxDescriptors?: number;
  /** Most entries one descriptor may carry. Default {@link MAX_DESCRIPTOR_ENTRIES} (64). */
  maxDescriptorEntries?: number;
}

/** Counters and what is loaded, for tests, metrics and diag. */
export interface RateLimitServiceStats {
  requests: number;
  overLimit: number;
  storeErrors: number;
  domains: string[];
  rules: number;
  files: string[];
  /** What the limits hold that loads but has no effect, one line each. */
  warnings: string[];
  store: string;
}

/** The rate-limit service as a gateway module (no HTTP face: it speaks gRPC). */
export interface RateLimitService extends RateLimiter {
  readonly name: string;
  readonly store: RateLimitStore;
  readonly bounds: RequestBounds;
  /**
   * Re-reads the limits folder. A set with any problem is refused whole (it
   * rejects with a LimitsConfigError) and the limits before it stay.
   * Counters are kept.
   */
  reload(): Promise<void>;
  /** Serves limits already read and checked (by a folder check that read the files once). Counters are kept. */
  useLimits(loaded: LoadedLimits): void;
  close(): Promise<void>;
  stats(): RateLimitServiceStats;
}

/** `limit_remaining` of an unlimited descriptor, as envoyproxy/ratelimit reports it. */
export const UNLIMITED_REMAINING = 4_294_967_295;

const STORE_ERROR_LOG_INTERVAL_MS = 10_000;
/** Most warnings of the limits logged one by one at a load. */
const MAX_WARNING_LINES = 100;

/** Builds the rate-limit service. Throws a LimitsConfigError on limits it cannot use. */
export function createRateLimitService(options: RateLimitServiceOptions = {}): RateLimitService {
  const now = options.now ?? Date.now;
  const logger: RateLimitLogger = options.logger ?? pino({ name: 'ratelimit' });
  const bounds: RequestBounds = Object.freeze({
    maxDescriptors: checkBound(options.maxDescriptors ?? DEFAULT_REQUEST_BOUNDS.maxDescriptors, 'maxDescriptors'),
    maxDescriptorEntries: checkBound(
      options.maxDescriptorEntries ?? DEFAULT_REQUEST_BOUNDS.maxDescriptorEntries,
      'maxDescriptorEntries',
    ),
  });
  const store = options.store ?? createMemoryStore({ now });
  let files: string[] = [];
  let warnings: string[] = [];
  let table: LimitTable;

  function load(given?: LoadedLimits): LimitTable {
    let loaded: CompiledLimits;
    if (given !== undefined || options.limitsDir !== undefined) {
      const read = given ?? loadLimitsDir(options.limitsDir!, options.fileSizeLimit);
      files = read.files;
      loaded = read;
    } else {
      loaded = compileDocumentsWithWarnings(options.limits ?? []);
    }
    warnings = loaded.warnings;
    // Keys envoyproxy/ratelimit accepts but that change nothing: said at every load, so a reload shows them too.
    // Up to a point: a file of 100 000 descriptors that each deserve a warning would log as many lines at every reload.
    for (const warning of warnings.slice(0, MAX_WARNING_LINES))
      logger.warn({ warning }, 'rate-limit configuration warning');
    if (warnings.length > MAX_WARNING_LINES)
      logger.warn({ more: warnings.length - MAX_WARNING_LINES }, 'more rate-limit configuration warnings');
    return loaded.table;
  }
  table = load(options.loaded);

  const counts = { requests: 0, overLimit: 0, storeErrors: 0 };
  let lastStoreErrorLog = -Infinity;

  function storeFailed(err: unknown): never {
    // A caller that left is no failure of the store.
    if (err instanceof CallerGoneError) throw err;
    counts.storeErrors++;
    const t = now();
    if (t - lastStoreErrorLog >= STORE_ERROR_LOG_INTERVAL_MS) {
      lastStoreErrorLog = t;
      logger.warn(
        { store: store.kind, err: (err as Error).message, failures: counts.storeErrors },
        'rate-limit store unavailable',
      );
    }
    throw err;
  }

  /** Decides a request: at once when the store does, else when it answers. */
  function decide(request: RateLimitRequest, options?: DecideOptions): RateLimitResponse | Promise<RateLimitResponse> {
    const descriptors = checkedDescriptors(request, bounds);
    counts.requests++;
    const statuses = new Array<DescriptorStatus>(descriptors.length);
    const rules = rulesOf(request.domain, descriptors, table);
    const at = now();
    const defaultHits = request.hitsAddend && request.hitsAddend > 0 ? request.hitsAddend : 1;

    const checks: WindowCheck[] = [];
    const owners: number[] = [];
    let quotaMode = false;
    for (let i = 0; i < descriptors.length; i++) {
      const rule = rules[i];
      if (!rule) statuses[i] = { code: 'OK', limitRemaining: 0 };
      else if (rule.unlimited) statuses[i] = { code: 'OK', limitRemaining: UNLIMITED_REMAINING };
      else {
        const d = descriptors[i];
        const windowStart = at - (at % rule.windowMs);
        checks.push({
          key: counterKey(request.domain, d.entries, rule, windowStart),
          hits: d.hitsAddend ?? defaultHits,
          limit: rule.requestsPerUnit,
          ttlMs: windowStart + rule.windowMs - at,
          enforce: !rule.shadowMode && !rule.quotaMode,
        });
        owners.push(i);
        if (rule.quotaMode) quotaMode = true;
      }
    }
    if (checks.length === 0) return { overallCode: 'OK', statuses };
    if (options?.gone?.()) throw new CallerGoneError();

    let decision: StoreDecision | Promise<StoreDecision>;
    try {
      decision = store.decide(checks, options);
    } catch (err) {
      storeFailed(err);
    }
    if (decision instanceof Promise) {
      return decision.then((d) => respond(counts, request, checks, owners, rules, statuses, d, quotaMode), storeFailed);
    }
    return respond(counts, request, checks, owners, rules, statuses, decision, quotaMode);
  }

  async function shouldRateLimit(request: RateLimitRequest, options?: DecideOptions): Promise<RateLimitResponse> {
    return decide(request, options);
  }

  return {
    name: options.name ?? 'ratelimit',
    store,
    bounds,
    shouldRateLimit,
    decide,
    async reload() {
      try {
        table = load();
      } catch (err) {
        logger.error({ err: errorText(err) }, 'rate limits refused; the previous limits stay');
        throw err;
      }
      logger.info({ files, domains: [...table.domains.keys()], rules: table.ruleCount }, 'rate limits loaded');
    },
    useLimits(loaded) {
      table = load(loaded);
      logger.info({ files, domains: [...table.domains.keys()], rules: table.ruleCount }, 'rate limits loaded');
    },
    async close() {
      await store.close();
    },
    stats() {
      return {
        ...counts,
        domains: [...table.domains.keys()],
        rules: table.ruleCount,
        files: [...files],
        warnings: [...warnings],
        store: store.kind,
      };
    },
  };
}
