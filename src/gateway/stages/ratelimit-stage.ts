/**
 * @module gateway/stages/ratelimit-stage
 * The gateway's side of a RateLimitService record: turns a Mapping's labels
 * into descriptors, asks the rate-limit service (a function call for the
 * built-in module, gRPC for an address), answers 429 over the limit, lets a
 * request over a quota-mode limit through with the service's metadata, and
 * applies the failure mode when the service does not answer in time.
 */
import type { Context } from 'koa';
import pino from 'pino';
import { HttpError, ORIGINAL_PATH, redactAddress } from '../../http';
import type { RateLimitResponse } from '../../ratelimit';
import type { MappingRecord, RateLimitServiceRecord } from '../config/schema';
import { pacedFailureLog, type StageLogger } from '../failure-log';
import type { GatewayEvents } from '../events';
import { trustedClientAddress } from '../request/headers/forwarded';
import { buildDescriptors, labelPlan, type LabelPlan } from './ratelimit-labels';
import type { ModuleRegistry } from '../module';
import type { Stage } from './stage';
import { answerSettler } from './ratelimit-answer';
import { rateLimitServiceClient, type RateLimitChannelOptions } from './ratelimit-service-client';
import { traceOf, type ChildSpan, type HeaderCarrier, type RequestTrace } from '../../tracing';

export { mostRestrictive, rateLimitHeaders } from './ratelimit-headers';
export { RATE_LIMIT_HEADERS_STATE, RATE_LIMIT_METADATA_STATE } from './ratelimit-answer';
export { buildDescriptors, labelPlan, type LabelFacts, type LabelPlan } from './ratelimit-labels';

/** The `source_cluster` label's value when the gateway is not given one, as Envoy's `--service-cluster`. */
export const DEFAULT_SOURCE_CLUSTER = 'gatehouse';

/** The logging the stage does: pino's shape. */
export type RateLimitStageLogger = StageLogger;

/** The stage's options; a {@link GatewayEvents} fits as it is (the gateway passes its events here). */
export interface RateLimitStageOptions extends GatewayEvents, RateLimitChannelOptions {
  logger?: RateLimitStageLogger;
  /** Clock in ms, for the failure log's pacing. */
  now?: () => number;
  /** The value of a `source_cluster` label: the gateway's own name. Default `gatehouse`. */
  sourceCluster?: string;
  /** No `x-envoy-ratelimited` on a 429, as the Module's `suppress_envoy_headers` asks. Default false. */
  suppressEnvoyHeaders?: boolean;
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

/** The request's path as routed (normalised, under the app's mount) with its query: Envoy's `:path`. */
function pathWithQuery(ctx: Context): string {
  const path = (ctx.state[ORIGINAL_PATH] as string | undefined) ?? ctx.path;
  const query = ctx.querystring;
  return query === '' ? path : `${path}?${query}`;
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
  const { local, remote, ask } = rateLimitServiceClient(record, modules, options);
  const plans = new WeakMap<MappingRecord, LabelPlan | null>();
  const stats: RateLimitStageStats = { checked: 0, overLimit: 0, failures: 0, quotaExceeded: 0 };
  const logFailure = pacedFailureLog(logger, now);
  const settle = answerSettler(options, stats);

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
}
