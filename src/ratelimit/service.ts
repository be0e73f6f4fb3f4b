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
import type { RateLimiter, RateLimitRequest, RateLimitResponse, DescriptorStatus } from './types';
import { findRule, type LimitRule, type LimitTable } from './limits/index';
import { errorText } from '../files';
import { compileDocumentsWithWarnings, loadLimitsDir, type CompiledLimits, type LoadedLimits } from './limits/loader';
import {
  checkBound,
  DEFAULT_REQUEST_BOUNDS,
  descriptorsOverBound,
  entriesOverBound,
  type RequestBounds,
} from './bounds';
import { counterKey } from './counter-key';
import { createMemoryStore } from './memory-store';
import { quotaModeMetadata } from './grpc/messages/quota-metadata';
import {
  CallerGoneError,
  earlierHits,
  type DecideOptions,
  type RateLimitStore,
  type StoreDecision,
  type WindowCheck,
} from './store';
import { UNIT_SECONDS, isRateLimitUnit } from './limits/units';

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

/** A request the service cannot answer: the gRPC adapter maps it to INVALID_ARGUMENT. */
export class RateLimitRequestError extends Error {
  readonly code = 'INVALID_ARGUMENT';
  constructor(message: string) {
    super(message);
    this.name = 'RateLimitRequestError';
  }
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

/** The checks a descriptor needs before it is counted: its entries within bounds, its own limit's unit, and hits the stores can add exactly. */
function checkDescriptor(d: RateLimitRequest['descriptors'][number], i: number, bounds: RequestBounds): void {
  const entries = d.entries?.length ?? 0;
  if (entries > bounds.maxDescriptorEntries) throw new RateLimitRequestError(entriesOverBound(bounds, i, entries));
  if (d.limit && !isRateLimitUnit(d.limit.unit)) {
    throw new RateLimitRequestError(`descriptors[${i}].limit.unit: ${String(d.limit.unit)} is not a rate-limit unit`);
  }
  // Counters are doubles in the memory store and 64-bit integers in Redis: above 2^53 neither adds exactly.
  if (d.hitsAddend !== undefined && !(Number.isSafeInteger(d.hitsAddend) && d.hitsAddend >= 0)) {
    // Decoded as a double, a uint64 that large is rounded: the message does not repeat a number the client did not send.
    const why =
      d.hitsAddend > Number.MAX_SAFE_INTEGER
        ? `above ${Number.MAX_SAFE_INTEGER}, the largest count it may add`
        : `${d.hitsAddend} is not a whole number from 0`;
    throw new RateLimitRequestError(`descriptors[${i}].hits_addend: ${why}`);
  }
}

/** The rule a descriptor's own `limit` asks for, as envoyproxy/ratelimit honours it. */
function overrideRule(domain: string, limit: NonNullable<RateLimitRequest['descriptors'][number]['limit']>): LimitRule {
  return {
    fullKey: `${domain}.<override>`,
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    replaces: [],
    requestsPerUnit: limit.requestsPerUnit,
    windowMs: UNIT_SECONDS[limit.unit] * 1000,
    currentLimit: { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit },
  };
}

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

  function rulesOf(
    domain: string,
    descriptors: RateLimitRequest['descriptors'],
    current: LimitTable,
  ): (LimitRule | undefined)[] {
    const rules = new Array<LimitRule | undefined>(descriptors.length);
    if (!current.domains.has(domain)) return rules;
    for (let i = 0; i < descriptors.length; i++) {
      const d = descriptors[i];
      rules[i] = d.limit ? overrideRule(domain, d.limit) : findRule(current, domain, d.entries);
    }
    if (current.hasReplaces) {
      const replaced = new Set<string>();
      for (const rule of rules) if (rule) for (const name of rule.replaces) replaced.add(name);
      for (let i = 0; i < rules.length; i++) {
        const rule = rules[i];
        // An unlimited rule is answered before replacing, as envoyproxy/ratelimit does: it stays unlimited.
        if (rule?.name !== undefined && !rule.unlimited && replaced.has(rule.name)) rules[i] = undefined;
      }
    }
    return rules;
  }

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

  /** The statuses of the counted descriptors, once the store has decided. */
  function respond(
    request: RateLimitRequest,
    checks: readonly WindowCheck[],
    owners: readonly number[],
    rules: readonly (LimitRule | undefined)[],
    statuses: DescriptorStatus[],
    decision: StoreDecision,
    quotaMode: boolean,
  ): RateLimitResponse {
    let over = false;
    let violations: number[] | undefined;
    const earlier = earlierHits(checks);
    for (let j = 0; j < checks.length; j++) {
      const check = checks[j];
      const rule = rules[owners[j]]!;
      const before = decision.before[j];
      // What this descriptor saw: its counter plus the earlier hits of this request on it.
      const seen = before + (earlier?.[j] ?? 0);
      const exceeds = seen + check.hits > check.limit;
      // A quota is reported over, as envoyproxy/ratelimit reports it, without refusing the request.
      const code = exceeds && !rule.shadowMode ? 'OVER_LIMIT' : 'OK';
      if (code === 'OVER_LIMIT') {
        if (rule.quotaMode) (violations ??= []).push(owners[j]);
        else over = true;
      }
      const status: DescriptorStatus = {
        code,
        currentLimit: rule.currentLimit,
        // Refused, the request took nothing: what remains is what was there.
        limitRemaining: exceeds ? 0 : decision.admitted ? check.limit - seen - check.hits : check.limit - before,
        // Whole seconds, as envoyproxy/ratelimit counts them: its clock reads seconds, so the last
        // fraction of a window reads as 1 s (Envoy turns this into X-RateLimit-Reset, in seconds).
        durationUntilResetMs: Math.ceil(check.ttlMs / 1000) * 1000,
      };
      if (rule.shadowMode) status.shadow = true;
      statuses[owners[j]] = status;
    }
    if (over) counts.overLimit++;
    const response: RateLimitResponse = { overallCode: over ? 'OVER_LIMIT' : 'OK', statuses };
    if (quotaMode) response.dynamicMetadata = quotaModeMetadata(request, violations);
    return response;
  }

  /** Decides a request: at once when the store does, else when it answers. */
  function decide(request: RateLimitRequest, options?: DecideOptions): RateLimitResponse | Promise<RateLimitResponse> {
    if (typeof request.domain !== 'string' || request.domain === '') {
      throw new RateLimitRequestError('rate limit domain must not be empty');
    }
    const descriptors = request.descriptors ?? [];
    if (descriptors.length > bounds.maxDescriptors)
      throw new RateLimitRequestError(descriptorsOverBound(bounds, descriptors.length));
    for (let i = 0; i < descriptors.length; i++) checkDescriptor(descriptors[i], i, bounds);
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
      return decision.then((d) => respond(request, checks, owners, rules, statuses, d, quotaMode), storeFailed);
    }
    return respond(request, checks, owners, rules, statuses, decision, quotaMode);
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
