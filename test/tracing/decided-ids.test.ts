/**
 * The span ids tracing hands the SDK: random, valid W3C ids, with the trace
 * id and the sampling decision a request was decided on used exactly once.
 */
import assert from 'node:assert/strict';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { AlwaysOffSampler, SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { DecidedIds } from '../../src/tracing/decided-ids';

describe('tracing ids', function () {
  it('are lower-case hex of the W3C lengths, none all zeros, none repeated over many draws', () => {
    const ids = new DecidedIds();
    const traces = new Set<string>();
    const spans = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const traceId = ids.generateTraceId();
      const spanId = ids.generateSpanId();
      assert.match(traceId, /^(?!0{32})[0-9a-f]{32}$/);
      assert.match(spanId, /^(?!0{16})[0-9a-f]{16}$/);
      traces.add(traceId);
      spans.add(spanId);
    }
    assert.equal(traces.size, 2000);
    assert.equal(spans.size, 2000);
  });

  it('give the decided trace id and sampling decision to the next span only', () => {
    const ids = new DecidedIds();
    const sampler = ids.sampler(new AlwaysOffSampler());
    const ask = () => sampler.shouldSample(ROOT_CONTEXT, 'a'.repeat(32), 'GET', SpanKind.SERVER, {}, []).decision;
    ids.decide('f'.repeat(32), { decision: SamplingDecision.RECORD_AND_SAMPLED });
    assert.equal(ask(), SamplingDecision.RECORD_AND_SAMPLED);
    assert.equal(ids.generateTraceId(), 'f'.repeat(32));
    assert.equal(ask(), SamplingDecision.NOT_RECORD);
    assert.notEqual(ids.generateTraceId(), 'f'.repeat(32));
  });
});
