import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { PendingCount, PendingObservations } from '../../src/telemetry/pending';

const BUCKETS = [0.001, 0.005, 0.01, 0.1, 1];

/** Two registries with the same histogram: one fed in batches, one by prom-client's observe. */
function twins() {
  const make = () => {
    const registry = new Registry();
    const histogram = new Histogram({
      name: 'took_seconds',
      help: 'Time taken.',
      labelNames: ['route', 'method'],
      buckets: BUCKETS,
      registers: [registry],
    });
    return { registry, histogram };
  };
  return { batched: make(), direct: make() };
}

// Spread over every bucket, exactly on bounds, and past the last one.
const values = Array.from(
  { length: 700 },
  (_, i) => [0.0004, 0.001, 0.003, 0.005, 0.07, 0.1, 0.5, 1, 2.5, 30][i % 10] * (1 + (i % 7) / 1000),
);

/** The exposition's lines, in an order that does not depend on which label set came first. */
const lines = (text: string) => text.split('\n').sort();

describe('telemetry/pending', () => {
  it('exposes batched observations exactly as prom-client exposes the same observations made one by one', async () => {
    const { batched, direct } = twins();
    const get = new PendingObservations(batched.histogram, { route: 'hotels', method: 'GET' });
    const post = new PendingObservations(batched.histogram, { route: 'hotels', method: 'POST' });
    values.forEach((value, i) => {
      (i % 3 === 0 ? post : get).add(value);
      direct.histogram.labels({ route: 'hotels', method: i % 3 === 0 ? 'POST' : 'GET' }).observe(value);
    });
    get.flush();
    post.flush();
    const text = await batched.registry.metrics();
    assert.deepEqual(lines(text), lines(await direct.registry.metrics()));
    assert.match(text, /took_seconds_count\{route="hotels",method="GET"\} 466/);
    assert.match(text, /took_seconds_bucket\{le="\+Inf",route="hotels",method="POST"\} 234/);
  });

  it('keeps counting after the registry is reset, from zero, as prom-client does', async () => {
    const { batched, direct } = twins();
    const pending = new PendingObservations(batched.histogram, { route: 'cars', method: 'GET' });
    for (const value of values.slice(0, 300)) pending.add(value);
    pending.flush();
    batched.registry.resetMetrics();
    for (const value of values.slice(300)) {
      pending.add(value);
      direct.histogram.labels({ route: 'cars', method: 'GET' }).observe(value);
    }
    pending.flush();
    const text = await batched.registry.metrics();
    assert.equal(text, await direct.registry.metrics());
    assert.match(text, /took_seconds_count\{route="cars",method="GET"\} 400/);
  });

  it('counts every finite observation of a batch that holds one prom-client refuses, and throws its error', async () => {
    const { batched, direct } = twins();
    const pending = new PendingObservations(batched.histogram, { route: 'hotels', method: 'GET' });
    const finite = values.slice(0, 200);
    finite.forEach((value, i) => {
      pending.add(value);
      if (i === 50) pending.add(Number.NaN);
      direct.histogram.labels({ route: 'hotels', method: 'GET' }).observe(value);
    });
    assert.throws(() => pending.flush(), { name: 'TypeError', message: /Value is not a valid number: NaN/ });
    const text = await batched.registry.metrics();
    assert.deepEqual(lines(text), lines(await direct.registry.metrics()));
    assert.match(text, /took_seconds_count\{route="hotels",method="GET"\} 200/);
  });

  it('hands nothing over, and makes no label set, before anything is observed', async () => {
    const { batched } = twins();
    const pending = new PendingObservations(batched.histogram, { route: 'idle', method: 'GET' });
    pending.flush();
    assert.doesNotMatch(await batched.registry.metrics(), /took_seconds_count/);
  });

  it('adds up counts and hands them over in one increment', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'done_total', help: 'Done.', labelNames: ['result'], registers: [registry] });
    const pending = new PendingCount(counter.labels('ok'));
    pending.count += 5;
    pending.flush();
    pending.flush();
    assert.match(await registry.metrics(), /done_total\{result="ok"\} 5\n/);
  });
});
