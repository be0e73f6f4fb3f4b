/**
 * @module tracing/propagation
 * Which headers carry the trace context, in and out: W3C trace context
 * (`traceparent`, `tracestate`) with OpenTelemetry's own propagator, B3
 * (single `b3` or `x-b3-*`) when asked for. A malformed `traceparent` or
 * `tracestate` is ignored as the W3C says (a new trace starts; invalid
 * `tracestate` members are dropped), never an error. `baggage` passes
 * through as the client sent it.
 */
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import type { Context, SpanContext, TextMapGetter, TextMapPropagator, TextMapSetter } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import type { PropagatorName } from './settings';
import type { HeaderCarrier } from './types';

/** The trace context headers of every propagator, which a new context replaces whole. */
const CONTEXT_HEADERS = [
  'traceparent',
  'tracestate',
  'b3',
  'x-b3-traceid',
  'x-b3-spanid',
  'x-b3-parentspanid',
  'x-b3-sampled',
  'x-b3-flags',
];

/** Node's incoming headers: lower-case names, repeated ones in a list (the propagators read the first). */
const incomingGetter: TextMapGetter<IncomingHttpHeaders> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** Outgoing headers: set as they are named. */
const outgoingSetter: TextMapSetter<HeaderCarrier> = {
  set(carrier, key, value) {
    carrier[key] = value;
  },
};

/** Reads and writes the context headers the settings name. */
export interface Propagation {
  /** The client's context: `root` with the remote span it names, or `root` itself when it names none (or a malformed one). */
  extract(root: Context, headers: IncomingHttpHeaders): Context;
  /**
   * Writes a span's context into `headers`, after taking out whatever trace
   * context they carried (a client's stale `tracestate` must not ride on a
   * new `traceparent`); `baggage` is set to the client's, when it sent one.
   */
  inject(ids: SpanContext, headers: HeaderCarrier, baggage: string | string[] | undefined): void;
}

/** Takes out the trace context headers `headers` carried. */
function clearContext(headers: HeaderCarrier): void {
  for (let i = 0; i < CONTEXT_HEADERS.length; i++) {
    if (headers[CONTEXT_HEADERS[i]] !== undefined) delete headers[CONTEXT_HEADERS[i]];
  }
}

/** The propagation of `names` (`none` alone: no context read or written, but baggage still passes). */
export function createPropagation(names: readonly PropagatorName[]): Propagation {
  const core = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const propagators: TextMapPropagator[] = [];
  if (names.includes('tracecontext')) propagators.push(new core.W3CTraceContextPropagator());
  const b3 = names.includes('b3') ? 'single' : names.includes('b3multi') ? 'multi' : undefined;
  if (b3 !== undefined) {
    const { B3Propagator, B3InjectEncoding } =
      require('@opentelemetry/propagator-b3') as typeof import('@opentelemetry/propagator-b3');
    propagators.push(
      new B3Propagator({
        injectEncoding: b3 === 'single' ? B3InjectEncoding.SINGLE_HEADER : B3InjectEncoding.MULTI_HEADER,
      }),
    );
  }
  const propagator: TextMapPropagator =
    propagators.length === 1 ? propagators[0] : new core.CompositePropagator({ propagators });
  // W3C trace context alone is the default: no `traceparent` then means no
  // context to read, and a span's context is written without building an
  // OpenTelemetry context to carry it to the propagator.
  const w3cAlone = b3 === undefined;
  const w3cWritten = names.includes('tracecontext');
  return {
    extract(root, headers) {
      if (w3cAlone && headers.traceparent === undefined) return root;
      return propagator.extract(root, headers, incomingGetter);
    },
    inject(ids, headers, baggage) {
      clearContext(headers);
      if (!w3cAlone) propagator.inject(trace.setSpanContext(ROOT_CONTEXT, ids), headers, outgoingSetter);
      else if (w3cWritten) {
        // Version 00 of the W3C's format, as W3CTraceContextPropagator writes a span of ours.
        headers.traceparent = `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & 1) === 1 ? '01' : '00'}`;
        const state = ids.traceState?.serialize();
        if (state) headers.tracestate = state;
      }
      if (baggage !== undefined) headers.baggage = baggage;
    },
  };
}
