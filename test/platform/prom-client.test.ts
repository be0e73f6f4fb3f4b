/**
 * @module test/platform/prom-client
 * What src/platform/prom-client relies on in prom-client, checked against
 * the prom-client installed: values observed through `histogramObserver`
 * are exposed exactly as the same values observed through prom-client's
 * own `observe`, across resets, removals and bad values.
 */
import assert from 'node:assert/strict';
import { Histogram, Registry, type OpenMetricsContentType, type RegistryContentType } from 'prom-client';
import { histogramObserver, PROM_CLIENT_VERSION } from '../../src/platform';
import { pinnedAt, relies } from '../support/reliance';

const rely = (what: string, holds: boolean, detail?: string) =>
  relies('prom-client', PROM_CLIENT_VERSION, what, holds, detail);

/** Values on, between, below and beyond the buckets below, in seconds. */
const VALUES = [0, 0.001, 0.005, 0.0051, 0.02, 0.1, 0.3, 1, 2.5, 7, 12, 1e9, -3];
const BUCKETS = [0.005, 0.05, 0.5, 1, 2.5, 10];

/** A histogram `seconds` with the labels route and method, in `registry`. */
function histogramIn(registry: Registry<RegistryContentType> = new Registry(), enableExemplars = false) {
  const histogram = new Histogram({
    name: 'seconds',
    help: 'seconds',
    labelNames: ['route', 'method'] as const,
    buckets: BUCKETS,
    registers: [registry],
    enableExemplars,
  });
  return { registry, histogram };
}

describe('platform/prom-client: what Gatehouse relies on in prom-client', () => {
  it('is the version the platform file was written against', () => {
    pinnedAt('prom-client', PROM_CLIENT_VERSION);
  });

  it("exposes values observed through histogramObserver as prom-client's observe exposes them", async () => {
    const ours = histogramIn();
    const theirs = histogramIn();
    const observe = histogramObserver(ours.histogram, { route: 'hotels', method: 'GET' });
    const other = histogramObserver(ours.histogram, { route: 'cars', method: 'POST' });
    for (const value of VALUES) {
      observe(value);
      other(value * 2);
      theirs.histogram.labels({ route: 'hotels', method: 'GET' }).observe(value);
      theirs.histogram.labels({ route: 'cars', method: 'POST' }).observe(value * 2);
    }
    const text = await ours.registry.metrics();
    rely('keeps a record per label set that observe adds to', text === (await theirs.registry.metrics()), text);
    assert.match(text, /seconds_count\{route="hotels",method="GET"\} 13\n/);
  });

  it('counts into the new record after a reset, and after a removal of its label set', async () => {
    const ours = histogramIn();
    const theirs = histogramIn();
    const labels = { route: 'hotels', method: 'GET' };
    const observe = histogramObserver(ours.histogram, labels);
    for (const [i, value] of VALUES.entries()) {
      if (i === 4) [ours, theirs].forEach(({ histogram }) => histogram.reset());
      if (i === 8) [ours, theirs].forEach(({ histogram }) => histogram.remove(labels));
      observe(value);
      theirs.histogram.labels(labels).observe(value);
    }
    const text = await ours.registry.metrics();
    rely('replaces its records on reset and remove', text === (await theirs.registry.metrics()), text);
    assert.match(text, /seconds_count\{route="hotels",method="GET"\} 5\n/);
  });

  it("adds to the record without prom-client's observe once found, a record zero() made included", async () => {
    const { registry, histogram } = histogramIn();
    histogram.zero({ route: 'hotels', method: 'GET' });
    const observe = histogramObserver(histogram, { route: 'hotels', method: 'GET' });
    observe(0.2);
    // prom-client's observe stores its record again on every call: count those stores from now on.
    const internals = histogram as unknown as { hashMap: Record<string, unknown> };
    let stores = 0;
    internals.hashMap = new Proxy(internals.hashMap, {
      set: (target, key, value) => {
        stores++;
        return Reflect.set(target, key, value);
      },
    });
    for (const value of VALUES) observe(value);
    rely(
      'keeps the record observe made where it found it',
      stores === 0,
      `${stores} stores for ${VALUES.length} values`,
    );
    assert.match(await registry.metrics(), /seconds_count\{route="hotels",method="GET"\} 14\n/);
  });

  it("refuses a value that is not a number with prom-client's own error, and counts on after it", async () => {
    const { registry, histogram } = histogramIn();
    const observe = histogramObserver(histogram, { route: 'hotels', method: 'GET' });
    observe(0.2);
    assert.throws(() => observe(Number.NaN), /Value is not a valid number: NaN/);
    assert.throws(() => observe(Infinity), /Value is not a valid number/);
    observe(0.3);
    const text = await registry.metrics();
    assert.match(text, /seconds_count\{route="hotels",method="GET"\} 2\n/);
    assert.match(text, /seconds_sum\{route="hotels",method="GET"\} 0.5\n/);
  });

  it('leaves a histogram with exemplars to prom-client', async () => {
    // prom-client takes exemplars in OpenMetrics only.
    const openMetrics = new Registry<OpenMetricsContentType>();
    openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const { registry, histogram } = histogramIn(openMetrics, true);
    const observe = histogramObserver(histogram, { route: 'hotels', method: 'GET' });
    observe(0.2);
    observe(3);
    assert.match(await registry.metrics(), /seconds_bucket\{le="10",route="hotels",method="GET"\} 2\n/);
    assert.match(await registry.metrics(), /seconds_bucket\{le="0.5",route="hotels",method="GET"\} 1\n/);
  });
});
