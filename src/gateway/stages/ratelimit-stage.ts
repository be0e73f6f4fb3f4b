/**
 * @module gateway/stages/ratelimit-stage
 * The gateway's side of a RateLimitService record: turns a Mapping's labels
 * into descriptors, asks the rate-limit service (a function call for the
 * built-in module, gRPC for an address), answers 429 over the limit, lets a
 * request over a quota-mode limit through with the service's metadata, and
 * applies the failure mode when the service does not answer in time.
 */
import type { Context } from 'koa';
import type { ChannelCredentials } from '@grpc/grpc-js';
import pino from 'pino';
import { headerName, HttpError, ORIGINAL_PATH, redactAddress } from '../../http';
import {
  createRateLimitClient,
  withinDeadline,
  type DecideOptions,
  type RateLimiter,
  type RateLimitResponse,
} from '../../ratelimit';
import type { MappingRecord, RateLimitServiceRecord } from '../config/schema';
import { pacedFailureLog, type StageLogger } from '../failure-log';
import type { GatewayEvents } from '../events';
import { trustedClientAddress } from '../request/headers/forwarded';
import { buildDescriptors, labelPlan, type LabelPlan } from './ratelimit-labels';
import type { ModuleRegistry } from '../module';
import type { Stage } from './stage';
import { quotaViolations, rateLimitHeaders } from './ratelimit-headers';
import { keepAnswerHeaders, RESPONSE_FRAMING, type AnswerHeader } from './answer-headers';
import { USER_HEADER } from '../../auth';
import { traceOf, type ChildSpan, type HeaderCarrier, type RequestTrace } from '../../tracing';

export { mostRestrictive, rateLimitHeaders } from './ratelimit-headers';
export { buildDescriptors, labelPlan, type LabelFacts, type LabelPlan } from './ratelimit-labels';

/** The `source_cluster` label's value when the gateway is not given one, as Envoy's `--service-cluster`. */
export const DEFAULT_SOURCE_CLUSTER = 'gatehouse';

/** The logging the stage does: pino's shape. */
export type RateLimitStageLogger = StageLogger;

/** The stage's options; a {@link GatewayEvents} fits as it is (the gateway passes its events here). */
export interface RateLimitStageOptions extends GatewayEvents {
  logger?: RateLimitStageLogger;
  /** Clock in ms, for the failure log's pacing. */
  now?: () => number;
  /** The value of a `source_cluster` label: the gateway's own name. Default `gatehouse`. */
  sourceCluster?: string;
  /** No `x-envoy-ratelimited` on a 429, as the Module's `suppress_envoy_headers` asks. Default false. */
  suppressEnvoyHeaders?: boolean;
  /** How the channel to a remote service is secured, as a TLSContext gives it; default: as the record's `tls` says. */
  credentials?: ChannelCredentials;
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

/** State key under which the stage leaves the headers it set, for the gateway to keep. */
export const RATE_LIMIT_HEADERS_STATE = 'gatehouseRateLimitHeaders';

/**
 * State key under which the stage leaves the service's dynamic metadata of a
 * request it let through (for a quota-mode limit, a {@link QuotaModeMetadata}:
 * which descriptors are over their quota), for the middleware of an embedding
 * app to act on.
 */
export const RATE_LIMIT_METADATA_STATE = 'gatehouseRateLimitMetadata';

/** The request's path as routed (normalised, under the app's mount) with its query: Envoy's `:path`. */
function pathWithQuery(ctx: Context): string {
  const path = (ctx.state[ORIGINAL_PATH] as string | undefined) ?? ctx.path;
  const query = ctx.querystring;
  return query === '' ? path : `${path}?${query}`;
}

/** A header the service asks to add to the upstream's answer: one more line, as Envoy adds it. */
function toAnswerHeader(entry: { key: string; value: string }): AnswerHeader {
  return { name: entry.key, value: entry.value, append: true };
}

/**
 * The service's headers onto the request let through, added to those of
 * the same name; never Host, a pseudo-header, the framing or the user the
 * auth service named.
 */
function addRequestHeaders(ctx: Context, entries: readonly { key: string; value: string }[]): void {
  const headers = ctx.req.headers;
  for (const { key, value } of entries) {
    const name = key.toLowerCase();
    if (
      name === '' ||
      name.charCodeAt(0) === 58 ||
      name === 'host' ||
      name === USER_HEADER ||
      RESPONSE_FRAMING.has(name)
    )
      continue;
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${Array.isArray(prior) ? prior.join(',') : prior},${value}`;
  }
}

/** The 429 with the service's own body, as Envoy sends it; its type is plain text unless the service names one. */
function overLimitBody(ctx: Context, headers: Record<string, string>, body: Buffer): false {
  ctx.status = 429;
  const res = ctx.res;
  for (const name in headers) res.setHeader(headerName(name), headers[name]);
  const typed = res.getHeader('content-type') !== undefined;
  ctx.body = body;
  if (!typed) ctx.type = 'text/plain; charset=utf-8';
  return false;
}

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
  const sourceCluster = options.sourceCluster ?? DEFAULT_SOURCE_CLUSTER;
  const module = modules.get(record.service);
  const local: RateLimiter | undefined =
    typeof module?.shouldRateLimit === 'function' ? (module as RateLimiter) : undefined;
  // A misspelt module name would otherwise become a gRPC address that never
  // answers, and every request would pass unlimited: refused when built.
  if (!local && !record.service.includes(':') && !record.service.includes('/')) {
    throw new Error(
      `service '${redactAddress(record.service)}' is neither a built-in module that rate-limits nor an address (host:port or URL)`,
    );
  }
  let remote: ReturnType<typeof createRateLimitClient> | undefined;
  try {
    remote = local
      ? undefined
      : createRateLimitClient(record.service, {
          timeoutMs: record.timeout_ms,
          tls: record.tls === true || (typeof record.tls === 'string' && record.tls !== ''),
          credentials: options.credentials,
        });
  } catch (err) {
    // An address the client cannot reach as written: the client says why, this names the field.
    throw new Error(`service ${(err as Error).message}`);
  }
  type Ask = (
    req: Parameters<RateLimiter['shouldRateLimit']>[0],
    metadata?: HeaderCarrier,
  ) => RateLimitResponse | Promise<RateLimitResponse>;
  // A limiter with `decide` (the built-in service) keeps the deadline itself,
  // from when the decision reaches its store: a deadline armed here would
  // also count the time the request waited in this process's event loop,
  // and fail open, uncounted, a decision Redis was about to answer. Over the
  // memory store, it answers within the call.
  const asked: DecideOptions = { timeoutMs: record.timeout_ms };
  const noAnswer = () => new Error(`no answer within ${record.timeout_ms} ms`);
  const decide = local?.decide?.bind(local);
  const ask: Ask = !local
    ? (req, metadata) => remote!.shouldRateLimit(req, metadata === undefined ? undefined : { metadata })
    : decide
      ? (req) => decide(req, asked)
      : (req) =>
          withinDeadline(
            record.timeout_ms,
            (gone) => local.shouldRateLimit(req, { timeoutMs: record.timeout_ms, gone }),
            noAnswer,
          );
  const plans = new WeakMap<MappingRecord, LabelPlan | null>();
  const stats: RateLimitStageStats = { checked: 0, overLimit: 0, failures: 0, quotaExceeded: 0 };
  const logFailure = pacedFailureLog(logger, now);

  function planOf(mapping: MappingRecord): LabelPlan | null {
    let plan = plans.get(mapping);
    if (plan === undefined) plans.set(mapping, (plan = labelPlan(mapping, record.domain)));
    return plan;
  }

  /** The span of one decision, when the request is traced: a gRPC call to a remote service, work of this process's otherwise. */
  function openSpan(trace: RequestTrace, descriptors: number): ChildSpan {
    const span = trace.child('ratelimit', local ? 'internal' : 'client');
    if (span.recording) {
      span.set('gatehouse.ratelimit.domain', record.domain);
      span.set('gatehouse.ratelimit.descriptors', descriptors);
      if (!local) {
        span.set('rpc.system', 'grpc');
        span.set('rpc.service', 'envoy.service.ratelimit.v3.RateLimitService');
        span.set('rpc.method', 'ShouldRateLimit');
        span.set('server.address', redactAddress(record.service));
      }
    }
    return span;
  }

  /** Ends a decision's span with its outcome. */
  function closeSpan(span: ChildSpan | null, outcome: 'ok' | 'over_limit' | 'error', err?: unknown): void {
    if (span === null) return;
    span.set('gatehouse.ratelimit.outcome', outcome);
    if (outcome === 'error') span.fail(err instanceof Error && /within/.test(err.message) ? 'timeout' : 'unavailable');
    span.end();
  }

  function failed(err: unknown): boolean {
    stats.failures++;
    options.rateLimitDecision?.('error');
    logFailure(
      err,
      { service: record.service, failureModeDeny: record.failure_mode_deny },
      record.failure_mode_deny
        ? 'rate-limit service unavailable; refusing requests'
        : 'rate-limit service unavailable; letting requests through',
    );
    if (record.failure_mode_deny) throw HttpError.of('RATE_LIMIT_SERVICE_FAILED');
    return true;
  }

  return {
    target: local ? 'in-process' : record.service,
    run(ctx: Context, mapping: MappingRecord, cluster?: string): boolean | Promise<boolean> {
      const plan = planOf(mapping);
      if (!plan) return true;
      const facts = plan.facts
        ? {
            remoteAddress: trustedClientAddress(ctx),
            sourceCluster,
            destinationCluster: cluster ?? mapping.service,
            method: ctx.method,
            path: pathWithQuery(ctx),
            scheme: ctx.protocol,
          }
        : undefined;
      const descriptors = buildDescriptors(plan, ctx.req.headers, facts);
      if (descriptors.length === 0) return true;
      stats.checked++;
      const trace = traceOf(ctx.state);
      const span = trace === undefined ? null : openSpan(trace, descriptors.length);
      let answer: RateLimitResponse | Promise<RateLimitResponse>;
      let metadata: HeaderCarrier | undefined;
      if (span !== null && !local) span.inject((metadata = {}));
      try {
        answer = ask({ domain: record.domain, descriptors }, metadata);
      } catch (err) {
        closeSpan(span, 'error', err);
        return failed(err);
      }
      if (span === null) {
        if (answer instanceof Promise) return answer.then((response) => settle(ctx, response), failed);
        return settle(ctx, answer);
      }
      if (answer instanceof Promise)
        return answer.then(
          (response) => {
            closeSpan(span, response.overallCode === 'OVER_LIMIT' ? 'over_limit' : 'ok');
            return settle(ctx, response);
          },
          (err: unknown) => {
            closeSpan(span, 'error', err);
            return failed(err);
          },
        );
      closeSpan(span, answer.overallCode === 'OVER_LIMIT' ? 'over_limit' : 'ok');
      return settle(ctx, answer);
    },
    async close() {
      remote?.close();
    },
    stats: () => ({ ...stats }),
  };

  /**
   * Lets the request on with the RateLimit headers and what the service asks
   * to add, or refuses it with a 429: the service's `raw_body` when it gives
   * one, else the error body; `x-envoy-ratelimited: true` on it, as Envoy.
   */
  function settle(ctx: Context, response: RateLimitResponse): boolean {
    if (response.overallCode === 'OVER_LIMIT') {
      stats.overLimit++;
      options.rateLimitDecision?.('over_limit');
      const headers = rateLimitHeaders(response);
      if (!options.suppressEnvoyHeaders) headers['x-envoy-ratelimited'] = 'true';
      if (response.rawBody === undefined) throw HttpError.of('RATE_LIMITED', { headers });
      return overLimitBody(ctx, headers, response.rawBody);
    }
    options.rateLimitDecision?.('ok');
    const headers = rateLimitHeaders(response, false);
    // Straight on the response: ctx.set builds arrays for each header it sets.
    const res = ctx.res;
    if (!res.headersSent) for (const name in headers) res.setHeader(headerName(name), headers[name]);
    ctx.state[RATE_LIMIT_HEADERS_STATE] = headers;
    if (response.requestHeadersToAdd) addRequestHeaders(ctx, response.requestHeadersToAdd);
    if (response.responseHeadersToAdd) keepAnswerHeaders(ctx, response.responseHeadersToAdd.map(toAnswerHeader));
    if (response.dynamicMetadata) {
      ctx.state[RATE_LIMIT_METADATA_STATE] = response.dynamicMetadata;
      if (quotaViolations(response).length > 0) stats.quotaExceeded++;
    }
    return true;
  }
}
