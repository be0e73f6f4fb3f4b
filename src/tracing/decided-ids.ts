/**
 * @module tracing/decided-ids
 * The ids of the SDK's spans: random, as the SDK's own generator makes them,
 * except the trace id a request's sampling was decided on. A request is
 * sampled before any span is made (a request left out makes none), so the
 * SDK must start a recorded request's span with the trace id the sampler
 * was shown, not a new one.
 */
import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace-base';

/** The SDK's random ids, with a trace id that can be given for the next span. */
export class DecidedIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private decided: string | undefined;

  /** The trace id of the next span that starts a trace; undefined: a random one again. */
  decide(traceId: string | undefined): void {
    this.decided = traceId;
  }

  generateTraceId(): string {
    const decided = this.decided;
    if (decided === undefined) return this.random.generateTraceId();
    this.decided = undefined;
    return decided;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}
