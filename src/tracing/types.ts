/**
 * @module tracing/types
 * What the rest of Gatehouse sees of tracing: a request's trace, the spans
 * opened under it, and the small handle the gateway reads once a request.
 * Nothing here loads OpenTelemetry: with tracing off, none of it is made.
 */
import type { Context } from 'koa';

/** A span attribute's value. */
export type AttributeValue = string | number | boolean;

/** What a child span is: work of the gateway's own, or a call it makes to another service. */
export type ChildKind = 'internal' | 'client';

/** Outgoing headers, as the gateway builds them for an upstream or a service it asks. */
export type HeaderCarrier = Record<string, string | string[] | undefined>;

/**
 * A span opened under a request's (the auth check, the rate-limit decision,
 * an upstream try, a database call) or at the root (a config reload).
 */
export interface ChildSpan {
  /** Whether it is recorded: attributes are worth working out only then. */
  readonly recording: boolean;
  set(key: string, value: AttributeValue): void;
  /** An event on the span, with attributes. */
  event(name: string, attributes?: Record<string, AttributeValue>): void;
  /** Writes its context, as the parent of the call it stands for, into `headers` (traceparent, tracestate, baggage, b3). */
  inject(headers: HeaderCarrier): void;
  /** Marks it failed: `error.type` and the status ERROR, with a message that names no secret. */
  fail(errorType: string, message?: string): void;
  end(): void;
}

/** Where child spans are opened: a request's trace. */
export interface TraceParent {
  /** Opens a span under this one; a shared no-op one when the trace is not recorded. */
  child(name: string, kind: ChildKind, attributes?: Record<string, AttributeValue>): ChildSpan;
}

/** One request's trace: its SERVER span, ended when the response is. */
export interface RequestTrace extends TraceParent {
  /** 32 lower-case hex digits. */
  readonly traceId: string;
  /** The SERVER span's id, 16 lower-case hex digits. */
  readonly spanId: string;
  /** Whether the trace is sampled (its spans are exported). */
  readonly sampled: boolean;
  /** Names the span after the route the request matched (`GET /hotels/`), with `http.route` and the Mapping's name. */
  routed(route: string, mapping: string): void;
  /** The gateway refused the request itself: an event naming the check, the error's code. */
  refused(err: unknown): void;
  /** Writes the SERVER span's context into headers, as the parent of what is called with them (a module in process). */
  inject(headers: HeaderCarrier): void;
}

/** Starts the trace of each request while tracing is on. */
export interface RequestTracer {
  /** Reads the client's trace context (`traceparent`, `tracestate`, `baggage`, B3) and starts the SERVER span. */
  start(ctx: Context): RequestTrace;
  /** Opens a span at the root of a trace of its own (a config reload). */
  root(name: string, attributes?: Record<string, AttributeValue>): ChildSpan;
}

/** What the gateway reads once a request: null while tracing is off, and then nothing else is made. */
export interface GatewayTracing {
  readonly requests: RequestTracer | null;
}

/** Tracing off: what the gateway is given when it is told of no tracing. */
export const NO_TRACING: GatewayTracing = Object.freeze({ requests: null });

/** The name of a config reload's span, a trace of its own, recorded by every sampler but the always-off ones. */
export const RELOAD_SPAN = 'config reload';

/** The key of `ctx.state` under which a traced request keeps its {@link RequestTrace}. */
export const TRACE_STATE = 'gatehouseTrace';

/** The trace of a request, from its `ctx.state`; undefined when it is not traced. */
export function traceOf(state: Record<string, unknown>): RequestTrace | undefined {
  return state[TRACE_STATE] as RequestTrace | undefined;
}
