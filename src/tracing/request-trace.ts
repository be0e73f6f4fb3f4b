/**
 * @module tracing/request-trace
 * A request's trace with OpenTelemetry: the SERVER span, started from the
 * client's context, named after the route once matched and ended with the
 * response; the child spans opened under it; the context sent on. A request
 * the sampler leaves out gets a trace that records nothing and opens no
 * child: it only passes its context on (sampled flag off), so that the
 * services behind leave it out too.
 */
import {
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
  type TraceState,
} from '@opentelemetry/api';
import { SamplingDecision, type Sampler } from '@opentelemetry/sdk-trace-base';
import type { Context as KoaContext } from 'koa';
import type { ServerResponse } from 'node:http';
import { answeredError, HttpError, requestHost, statusOf } from '../http';
import { conventionalMethod, headerTagValues, hostParts, protocolVersion, redactedQuery } from './attributes';
import type { DecidedIds } from './decided-ids';
import type { Propagation } from './propagation';
import type { HeaderTag } from './settings';
import {
  TRACE_STATE,
  type AttributeValue,
  type ChildKind,
  type ChildSpan,
  type HeaderCarrier,
  type RequestTrace,
  type RequestTracer,
} from './types';

/** What every trace of one tracer shares. */
interface Shared {
  readonly tracer: Tracer;
  /** The tracer's sampler and ids: a request is sampled before its span is made. */
  readonly sampler: Sampler;
  readonly ids: DecidedIds;
  readonly propagation: Propagation;
  readonly tags: Readonly<Record<string, string>>;
  readonly headerTags: readonly HeaderTag[];
}

/** How a request's span starts: its attributes are set once it is known to record. */
const SERVER_SPAN = Object.freeze({ kind: SpanKind.SERVER });

const KINDS: Readonly<Record<ChildKind, SpanKind>> = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT };

/** The event of a refusal of the gateway's own. */
export const REFUSED_EVENT = 'gatehouse.refused';

/** A span opened under a recorded one. */
class RecordedChild implements ChildSpan {
  constructor(
    private readonly span: Span,
    private readonly shared: Shared,
    private readonly baggage: string | string[] | undefined,
  ) {}

  get recording(): boolean {
    return this.span.isRecording();
  }

  set(key: string, value: AttributeValue): void {
    this.span.setAttribute(key, value);
  }

  event(name: string, attributes?: Record<string, AttributeValue>): void {
    this.span.addEvent(name, attributes);
  }

  inject(headers: HeaderCarrier): void {
    this.shared.propagation.inject(this.span.spanContext(), headers, this.baggage);
  }

  fail(errorType: string, message?: string): void {
    this.span.setAttribute('error.type', errorType);
    this.span.setStatus(
      message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message },
    );
  }

  end(): void {
    this.span.end();
  }
}

/** Nothing for a sampler to read at the start: none of those that can be configured reads attributes or links. */
const NO_ATTRIBUTES = Object.freeze({});
const NO_LINKS = Object.freeze([]) as [];

/**
 * The trace of a request the sampler left out: no span, only the ids it
 * passes on (sampled flag off, so the services behind leave it out too). It
 * records nothing, is its own child, and is the span context it passes on.
 */
class UnrecordedTrace implements RequestTrace, ChildSpan, SpanContext {
  readonly recording = false;
  readonly sampled = false;
  readonly traceFlags = TraceFlags.NONE;

  constructor(
    readonly traceId: string,
    readonly spanId: string,
    readonly traceState: TraceState | undefined,
    private readonly shared: Shared,
    private readonly baggage: string | string[] | undefined,
  ) {}

  child(): ChildSpan {
    return this;
  }

  inject(headers: HeaderCarrier): void {
    this.shared.propagation.inject(this, headers, this.baggage);
  }

  routed(): void {}
  refused(): void {}
  set(): void {}
  event(): void {}
  fail(): void {}
  end(): void {}
}

/** The unrecorded trace of a span the SDK made but does not record. */
function unrecorded(ids: SpanContext, shared: Shared, baggage?: string | string[]): UnrecordedTrace {
  return new UnrecordedTrace(ids.traceId, ids.spanId, ids.traceState, shared, baggage);
}

/** The trace of a sampled request. */
class RecordedTrace implements RequestTrace {
  readonly sampled: boolean;
  readonly traceId: string;
  readonly spanId: string;
  private readonly context: Context;
  private readonly baggage: string | string[] | undefined;

  constructor(
    private readonly span: Span,
    private readonly shared: Shared,
    parent: Context,
    ctx: KoaContext,
    private readonly name: string,
    method: string,
  ) {
    const ids = span.spanContext();
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    this.sampled = (ids.traceFlags & 1) === 1;
    this.context = trace.setSpan(parent, span);
    this.baggage = ctx.req.headers.baggage;
    this.describe(ctx, method);
    const res = ctx.res;
    res.once('close', () => this.finish(res));
  }

  /** The attributes worth working out only for a recorded span. */
  private describe(ctx: KoaContext, conventional: string): void {
    const { span, shared } = this;
    const req = ctx.req;
    const request = ctx.request;
    const method = req.method ?? '';
    const scheme = request.protocol;
    span.setAttribute('http.request.method', conventional);
    if (conventional === '_OTHER') span.setAttribute('http.request.method_original', method);
    span.setAttribute('url.path', request.path);
    span.setAttribute('url.scheme', scheme);
    const [address, port] = hostParts(requestHost(ctx), scheme);
    span.setAttribute('server.address', address);
    span.setAttribute('server.port', port);
    span.setAttribute('client.address', request.ip);
    span.setAttribute('network.protocol.version', protocolVersion(req));
    const agent = req.headers['user-agent'];
    if (agent !== undefined) span.setAttribute('user_agent.original', agent);
    const query = request.querystring;
    if (query !== '') span.setAttribute('url.query', redactedQuery(query));
    span.setAttributes(shared.tags);
    if (shared.headerTags.length > 0) {
      headerTagValues(shared.headerTags, req.headers, method, request.path, scheme, (key, value) =>
        span.setAttribute(key, value),
      );
    }
  }

  routed(route: string, mapping: string): void {
    this.span.updateName(`${this.name} ${route}`);
    this.span.setAttribute('http.route', route);
    this.span.setAttribute('gatehouse.mapping', mapping);
  }

  refused(err: unknown): void {
    const code = err instanceof HttpError && err.code !== undefined ? err.code : 'INTERNAL_ERROR';
    this.span.addEvent(REFUSED_EVENT, { 'gatehouse.check': code, 'http.response.status_code': statusOf(err) });
  }

  inject(headers: HeaderCarrier): void {
    this.shared.propagation.inject(this.span.spanContext(), headers, this.baggage);
  }

  child(name: string, kind: ChildKind, attributes?: Record<string, AttributeValue>): ChildSpan {
    const span = this.shared.tracer.startSpan(name, { kind: KINDS[kind], attributes }, this.context);
    return new RecordedChild(span, this.shared, this.baggage);
  }

  /** The response is over: its status; a 5xx marks the span failed, a 4xx does not. */
  private finish(res: ServerResponse): void {
    const span = this.span;
    if (res.headersSent) {
      const status = res.statusCode;
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) {
        span.setAttribute('error.type', answeredError(res) ?? String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    } else span.setAttribute('gatehouse.answered', false);
    span.end();
  }
}

/** Starts the traces of requests with `tracer`. */
export function createRequestTracer(shared: Shared): RequestTracer {
  const { tracer, propagation, sampler, ids } = shared;
  return {
    start(ctx) {
      const req = ctx.req;
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const method = conventionalMethod(req.method ?? '');
      const name = method === '_OTHER' ? 'HTTP' : method;
      // Sampled first, by the SDK's sampler and on the trace id the span would
      // have: a request left out costs ids and a decision, not a span.
      const remote = parent === ROOT_CONTEXT ? undefined : trace.getSpanContext(parent);
      const continued = remote !== undefined && isSpanContextValid(remote);
      const traceId = continued ? remote.traceId : ids.generateTraceId();
      const sampling = sampler.shouldSample(parent, traceId, name, SpanKind.SERVER, NO_ATTRIBUTES, NO_LINKS);
      let traced: RequestTrace;
      if (sampling.decision === SamplingDecision.NOT_RECORD) {
        const traceState = sampling.traceState ?? (continued ? remote.traceState : undefined);
        traced = new UnrecordedTrace(traceId, ids.generateSpanId(), traceState, shared, req.headers.baggage);
      } else {
        ids.decide(continued ? undefined : traceId, sampling);
        const span = tracer.startSpan(name, SERVER_SPAN, parent);
        ids.decide(undefined, undefined);
        traced = span.isRecording()
          ? new RecordedTrace(span, shared, parent, ctx, name, method)
          : unrecorded(span.spanContext(), shared, req.headers.baggage);
      }
      ctx.state[TRACE_STATE] = traced;
      return traced;
    },
    root(name, attributes) {
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes, root: true });
      return span.isRecording() ? new RecordedChild(span, shared, undefined) : unrecorded(span.spanContext(), shared);
    },
  };
}
