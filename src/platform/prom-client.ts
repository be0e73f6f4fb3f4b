/**
 * @module platform/prom-client
 * What Gatehouse writes of a prom-client Histogram beyond its API: the
 * record its `observe` adds to for one label set, in `hashMap` (`labels`,
 * `sum`, `count`, and `bucketValues` keyed by each upper bound), and its
 * bounds (`upperBounds`). `observe` builds a labels object, validates the
 * labels and hashes them into a new string on every call, which costs a
 * request more than the rest of its counting; {@link histogramObserver}
 * adds to the record as `observe` would. Written against prom-client
 * 15.1.3 (pinned in package.json); test/platform/prom-client.test.ts
 * fails, naming the version, when a release changes any of it. A
 * histogram of another shape is observed through `observe`.
 */
import type { Histogram, LabelValues } from 'prom-client';

/** The prom-client release this file was written against. */
export const PROM_CLIENT_VERSION = '15.1.3';

/** What prom-client keeps for one label set of a histogram. */
interface HistogramRecord {
  labels: unknown;
  sum: number;
  count: number;
  bucketValues: Record<string, number>;
}

/** The parts of a prom-client Histogram that its `observe` works on. */
interface HistogramInternals {
  hashMap?: Record<string, HistogramRecord | undefined>;
  upperBounds?: readonly number[];
  enableExemplars?: boolean;
}

function isRecord(value: unknown): value is HistogramRecord {
  const record = value as HistogramRecord | null | undefined;
  return (
    typeof record === 'object' &&
    record !== null &&
    typeof record.sum === 'number' &&
    typeof record.count === 'number' &&
    typeof record.bucketValues === 'object' &&
    record.bucketValues !== null
  );
}

/** Whether `recorded` (a record's labels) holds the same label values as `labels`, and no others. */
function sameLabels(recorded: unknown, labels: Readonly<Record<string, unknown>>): boolean {
  if (typeof recorded !== 'object' || recorded === null) return false;
  const held = recorded as Record<string, unknown>;
  const names = Object.keys(labels);
  return Object.keys(held).length === names.length && names.every((name) => held[name] === labels[name]);
}

/**
 * Observes values of `histogram` for one label set, as its
 * `labels(labels).observe` does, counting each into the same record, the
 * same bucket and the same sum. The record is found once, through the
 * first `observe`, and looked for again after a `reset()` or `remove()`.
 * A value that is not finite goes to `observe`, which throws its own error.
 */
export function histogramObserver<T extends string>(
  histogram: Histogram<T>,
  labels: LabelValues<T>,
): (value: number) => void {
  const child = histogram.labels(labels);
  const internals = histogram as unknown as HistogramInternals;
  const bounds = internals.upperBounds;
  if (!Array.isArray(bounds) || internals.enableExemplars !== false) return (value) => child.observe(value);
  const boundKeys = bounds.map(String);
  let key: string | undefined;
  let record: HistogramRecord | undefined;

  const recordOf = (map: Record<string, HistogramRecord | undefined>): HistogramRecord | undefined => {
    for (const candidate of Object.keys(map)) {
      const found = map[candidate];
      if (
        isRecord(found) &&
        sameLabels(found.labels, labels) &&
        boundKeys.every((b) => typeof found.bucketValues[b] === 'number')
      ) {
        key = candidate;
        return found;
      }
    }
    return undefined;
  };

  return (value) => {
    if (record === undefined || internals.hashMap?.[key!] !== record || !Number.isFinite(value)) {
      child.observe(value);
      record = internals.hashMap === undefined ? undefined : recordOf(internals.hashMap);
      return;
    }
    record.sum += value;
    record.count += 1;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        record.bucketValues[boundKeys[i]] += 1;
        return;
      }
    }
  };
}
