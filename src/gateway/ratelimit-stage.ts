/**
 * @module gateway/ratelimit-stage
 * The gateway's side of a RateLimitService record: turns a Mapping's labels
 * into descriptors, asks the rate-limit service (a function call for the
 * built-in module, gRPC for an address), answers 429 over the limit, lets a
 * request over a quota-mode limit through with the service's metadata, and
 * applies the failure mode when the service does not answer in time.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Context } from 'koa';
import pino from 'pino';
import { headerName, headerText, httpError, redactAddress } from '../http';
import {
  createRateLimitClient,
  type DescriptorEntry,
  type QuotaModeMetadata,
  type RateLimiter,
  type RateLimitDescriptor,
  type RateLimitResponse,
} from '../ratelimit';
import type { MappingRecord, RateLimitServiceRecord } from './config/schema';
import { pacedFailureLog, type StageLogger } from './failure-log';
import type { GatewayEvents } from './events';
import type { ModuleRegistry } from './module';
import type { Stage } from './stage';
import { quotaViolations, rateLimitHeaders } from './ratelimit-headers';

export { mostRestrictive, rateLimitHeaders } from './ratelimit-headers';

/** One label of a group: a header read per request, or a literal `generic_key`. */
interface LabelSource {
  key: string;
  /** Lower-case header name; absent for a literal. */
  header?: string;
  literal?: string;
  /** A missing header drops only this entry (true) or the whole group (false). */
  omit: boolean;
}

/** The label groups of one Mapping for the stage's domain, parsed once. */
export type LabelPlan = readonly (readonly LabelSource[])[];

/** Precomputes the label groups of `mapping` under `domain`; null when it has none. */
export function labelPlan(mapping: Pick<MappingRecord, 'labels'>, domain: string): LabelPlan | null {
  const groups = mapping.labels?.[domain];
  if (!groups?.length) return null;
  return groups.map((group) =>
    group.request_label_group.map((label): LabelSource => {
      if (typeof label === 'string') return { key: 'generic_key', literal: label, omit: false };
      const [key, def] = Object.entries(label)[0];
      return { key, header: def.header.toLowerCase(), omit: def.omit_if_not_present };
    }),
  );
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  if (v === undefined || v === '') return undefined;
  // Envoy sends a value's bytes: a UTF-8 name (`josé`) must match the limit written for it.
  return headerText(typeof v === 'string' ? v : v.join(', '));
}

/**
 * The descriptors a request yields: one per group whose headers are there
 * (a group loses an `omit_if_not_present` entry whose header is missing, and
 * is dropped whole for any other missing header, or when nothing is left).
 */
export function buildDescriptors(plan: LabelPlan, headers: IncomingHttpHeaders): RateLimitDescriptor[] {
  const descriptors: RateLimitDescriptor[] = [];
  groups: for (const group of plan) {
    const entries: DescriptorEntry[] = [];
    for (const label of group) {
      const value = label.literal ?? headerValue(headers, label.header!);
      if (value === undefined) {
        if (label.omit) continue;
        continue groups;
      }
      entries.push({ key: label.key, value });
    }
    if (entries.length > 0) descriptors.push({ entries });
  }
  return descriptors;
}

/** The logging the stage does: pino's shape. */
export type RateLimitStageLogger = StageLogger;

/** The stage's options; a {@link GatewayEvents} fits as it is (the gateway passes its events here). */
export interface RateLimitStageOptions extends GatewayEvents {
  logger?: RateLimitStageLogger;
  /** Clock in ms, for the failure log's pacing. */
  now?: () => number;
}

/** Counters, for diag and metrics. */
export interface RateLimitStageStats {
  /** Requests the service was asked about. */
  checked: number;
  overLimit: number;
  /** Calls that failed or timed out. */
  failures: number;
  /** Requests let through over a quota-mode limit. */
  quotaExceeded: number;
}

export interface RateLimitStage extends Stage {
  /** `in-process` for a built-in module, else the address called. */
  readonly target: string;
  stats(): RateLimitStageStats;
}


/** Settles like `promise`, or rejects after `ms`: an in-process service may be waiting on Redis. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** State key under which the stage leaves the headers it set, for the gateway to keep. */
export const RATE_LIMIT_HEADERS_STATE = 'gatehouseRateLimitHeaders';

/**
 * State key under which the stage leaves the service's dynamic metadata of a
 * request it let through (for a quota-mode limit, a {@link QuotaModeMetadata}:
 * which descriptors are over their quota), for the middleware of an embedding
 * app to act on.
 */
export const RATE_LIMIT_METADATA_STATE = 'gatehouseRateLimitMetadata';

/**
 * Builds the rate-limit stage of a RateLimitService record. Throws when
 * `service` names neither a registered module with `shouldRateLimit` nor an
 * address.
 */
export function createRateLimitStage(
  record: RateLimitServiceRecord,
  modules: ModuleRegistry,
  options: RateLimitStageOptions = {},
): RateLimitStage {
  const logger = options.logger ?? pino({ name: 'gateway' });
  const now = options.now ?? Date.now;
  const module = modules.get(record.service);
  const local: RateLimiter | undefined = typeof module?.shouldRateLimit === 'function' ? (module as RateLimiter) : undefined;
  // A misspelt module name would otherwise become a gRPC address that never
  // answers, and every request would pass unlimited: refused when built.
  if (!local && !record.service.includes(':') && !record.service.includes('/')) {
    throw new Error(
      `service '${redactAddress(record.service)}' is neither a built-in module that rate-limits nor an address (host:port or URL)`,
    );
  }
  let remote: ReturnType<typeof createRateLimitClient> | undefined;
  try {
    remote = local ? undefined : createRateLimitClient(record.service, { timeoutMs: record.timeout_ms });
  } catch (err) {
    // An address the client cannot reach as written: the client says why, this names the field.
    throw new Error(`service ${(err as Error).message}`);
  }
  // The built-in service over its memory store answers within the call's own
  // microtasks, before any timer could fire: a deadline would never be met,
  // and arming one per request costs a timer. Any other store (Redis) or
  // in-process module may wait on I/O, and gets the deadline.
  const store = (module as { store?: { kind?: unknown } } | undefined)?.store;
  const answersAtOnce = local !== undefined && store?.kind === 'memory';
  type Ask = (req: Parameters<RateLimiter['shouldRateLimit']>[0]) => RateLimitResponse | Promise<RateLimitResponse>;
  const ask: Ask = !local
    ? (req) => remote!.shouldRateLimit(req)
    : answersAtOnce
      ? // Answered in this call when the module can: no promise per request.
        local.decide
        ? local.decide.bind(local)
        : (req) => local.shouldRateLimit(req)
      : (req) => withDeadline(local.shouldRateLimit(req), record.timeout_ms);
  const plans = new WeakMap<MappingRecord, LabelPlan | null>();
  const stats: RateLimitStageStats = { checked: 0, overLimit: 0, failures: 0, quotaExceeded: 0 };
  const logFailure = pacedFailureLog(logger, now);

  function planOf(mapping: MappingRecord): LabelPlan | null {
    let plan = plans.get(mapping);
    if (plan === undefined) plans.set(mapping, (plan = labelPlan(mapping, record.domain)));
    return plan;
  }

  function failed(err: unknown): boolean {
    stats.failures++;
    options.rateLimitDecision?.('error');
    logFailure(
      err,
      { service: record.service, failureModeDeny: record.failure_mode_deny },
      record.failure_mode_deny ? 'rate-limit service unavailable; refusing requests' : 'rate-limit service unavailable; letting requests through',
    );
    if (record.failure_mode_deny) throw httpError('INTERNAL_SERVER_ERROR', 'the rate-limit service did not answer');
    return true;
  }

  return {
    target: local ? 'in-process' : record.service,
    run(ctx: Context, mapping: MappingRecord): boolean | Promise<boolean> {
      const plan = planOf(mapping);
      if (!plan) return true;
      const descriptors = buildDescriptors(plan, ctx.req.headers);
      if (descriptors.length === 0) return true;
      stats.checked++;
      let answer: RateLimitResponse | Promise<RateLimitResponse>;
      try {
        answer = ask({ domain: record.domain, descriptors });
      } catch (err) {
        return failed(err);
      }
      if (answer instanceof Promise) return answer.then((response) => settle(ctx, response), failed);
      return settle(ctx, answer);
    },
    async close() {
      remote?.close();
    },
    stats: () => ({ ...stats }),
  };

  /** Lets the request on with the RateLimit headers, or refuses it with a 429. */
  function settle(ctx: Context, response: RateLimitResponse): boolean {
    const headers = rateLimitHeaders(response);
    if (response.overallCode === 'OVER_LIMIT') {
      stats.overLimit++;
      options.rateLimitDecision?.('over_limit');
      throw httpError('TOO_MANY_REQUESTS', undefined, { headers });
    }
    options.rateLimitDecision?.('ok');
    // Straight on the response: ctx.set builds arrays for each header it sets.
    const res = ctx.res;
    if (!res.headersSent) for (const name in headers) res.setHeader(headerName(name), headers[name]);
    ctx.state[RATE_LIMIT_HEADERS_STATE] = headers;
    if (response.dynamicMetadata) {
      ctx.state[RATE_LIMIT_METADATA_STATE] = response.dynamicMetadata;
      if (quotaViolations(response).length > 0) stats.quotaExceeded++;
    }
    return true;
  }
}
