/**
 * @module tracing/decided-ids
 * The ids of the SDK's spans: random, from the system's generator, except
 * the trace id a request's sampling was decided on. A request is sampled
 * before any span is made (a request left out makes none), so the SDK must
 * start a recorded request's span with the trace id the sampler was shown,
 * not a new one, and take the decision made rather than ask again.
 */
import type { IdGenerator, Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import { randomFillSync } from 'node:crypto';

/** Bytes drawn from the system at a time: a trace id and a span id for 170 requests. */
const POOL_BYTES = 4096;
const INVALID_TRACE_ID = '00000000000000000000000000000000';
const INVALID_SPAN_ID = '0000000000000000';

/** Random ids from one pool of system randomness, with a trace id that can be given for the next span. */
export class DecidedIds implements IdGenerator {
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  /** The pool in hex, written once a fill: an id is a slice of it, not a conversion of its own. */
  private hex = '';
  /** Where the next id begins in {@link hex}. */
  private offset = 0;
  private decided: string | undefined;
  private decision: SamplingResult | undefined;

  /**
   * The trace id of the next span that starts a trace (undefined: a random
   * one) and the sampling decision of the next span (undefined: the sampler's).
   */
  decide(traceId: string | undefined, sampling: SamplingResult | undefined): void {
    this.decided = traceId;
    this.decision = sampling;
  }

  /** `inner`, except for a span whose decision was made before it started. */
  sampler(inner: Sampler): Sampler {
    return {
      shouldSample: (context, traceId, spanName, kind, attributes, links) => {
        const decision = this.decision;
        if (decision === undefined) return inner.shouldSample(context, traceId, spanName, kind, attributes, links);
        this.decision = undefined;
        return decision;
      },
      toString: () => inner.toString(),
    };
  }

  generateTraceId(): string {
    const decided = this.decided;
    if (decided === undefined) return this.random(32, INVALID_TRACE_ID);
    this.decided = undefined;
    return decided;
  }

  generateSpanId(): string {
    return this.random(16, INVALID_SPAN_ID);
  }

  /** `digits` random lower-case hex digits, never all zeros (the W3C's invalid id). */
  private random(digits: number, invalid: string): string {
    let id: string;
    do {
      if (this.offset + digits > this.hex.length) {
        randomFillSync(this.pool);
        this.hex = this.pool.toString('hex');
        this.offset = 0;
      }
      id = this.hex.substring(this.offset, (this.offset += digits));
    } while (id === invalid);
    return id;
  }
}
