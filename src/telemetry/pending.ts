/**
 * @module telemetry/pending
 * Counts and observations made on the request path, handed to prom-client in
 * batches: its `inc` and `observe` hash the label values on every call, which
 * costs more than the rest of the counting. What waits is handed over before
 * every scrape (the metrics' `collect`), so that a scrape sees every request.
 */
import type { Histogram } from 'prom-client';

/** Something that waits to be handed to prom-client. */
export interface Pending {
  flush(): void;
}

/** Increments of one labelled counter, added up until they are handed over. */
export class PendingCount implements Pending {
  count = 0;
  constructor(private readonly child: { inc(value?: number): void }) {}
  flush(): void {
    if (this.count === 0) return;
    const n = this.count;
    this.count = 0;
    this.child.inc(n);
  }
}

/** Observations wait here up to this many at a time per label set. */
const OBSERVATION_BATCH = 256;

/** What prom-client (15) keeps for one label set of a histogram: what its `observe` adds to. */
interface HistogramRecord {
  labels: Record<string, unknown>;
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
}

/** The parts of a prom-client Histogram that its `observe` works on. */
interface HistogramInternals {
  hashMap?: Record<string, HistogramRecord | undefined>;
  upperBounds?: readonly number[];
  enableExemplars?: boolean;
}

function isRecord(value: HistogramRecord | undefined): value is HistogramRecord {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof value.sum === 'number' &&
    typeof value.count === 'number' &&
    typeof value.bucketValues === 'object' &&
    typeof value.labels === 'object'
  );
}

/**
 * Observations of one label set of a histogram. A batch goes to prom-client
 * as its first observation; the rest are added to the record that one made,
 * as prom-client's `observe` adds them (the same bucket, the same sum in the
 * same order), without its per-call work: a labels object, their
 * validation and their hash, 256 times over. Should the record not have the
 * shape that `observe` fills, every observation goes through `observe`.
 */
export class PendingObservations implements Pending {
  private readonly values = new Float64Array(OBSERVATION_BATCH);
  private length = 0;
  private readonly child: { observe(value: number): void };
  /** The key of this label set's record in the histogram's map, once found. */
  private key: string | undefined;
  private counts: Uint32Array | null = null;

  constructor(
    private readonly histogram: Histogram<string>,
    private readonly labels: Readonly<Record<string, string>>,
  ) {
    this.child = histogram.labels(labels);
  }

  add(value: number): void {
    this.values[this.length++] = value;
    if (this.length === OBSERVATION_BATCH) this.flush();
  }

  flush(): void {
    const n = this.length;
    if (n === 0) return;
    this.length = 0;
    const values = this.values;
    this.child.observe(values[0]);
    const internals = this.histogram as unknown as HistogramInternals;
    const record = this.record(internals);
    const bounds = internals.upperBounds;
    if (record === undefined || !Array.isArray(bounds) || internals.enableExemplars) {
      for (let i = 1; i < n; i++) this.child.observe(values[i]);
      return;
    }
    // Counted by bucket here, and added to prom-client's buckets (keyed by the bound's string) once a batch.
    const counts = this.bucketCounts(bounds.length);
    let sum = record.sum;
    let count = record.count;
    // What prom-client refuses: given to its observe once the rest is counted, to throw its own error.
    let refused: number[] | null = null;
    for (let i = 1; i < n; i++) {
      const value = values[i];
      if (!Number.isFinite(value)) {
        (refused ??= []).push(value);
        continue;
      }
      sum += value;
      count += 1;
      // The first bound the value is within; none past the last (only +Inf, the count, has it).
      for (let b = 0; b < bounds.length; b++) {
        if (value <= bounds[b]) {
          counts[b]++;
          break;
        }
      }
    }
    record.sum = sum;
    record.count = count;
    const buckets = record.bucketValues;
    for (let b = 0; b < bounds.length; b++) {
      if (counts[b] !== 0 && Object.prototype.hasOwnProperty.call(buckets, bounds[b])) buckets[bounds[b]] += counts[b];
    }
    if (refused !== null) for (const value of refused) this.child.observe(value);
  }

  private bucketCounts(length: number): Uint32Array {
    if (this.counts === null || this.counts.length !== length) this.counts = new Uint32Array(length);
    else this.counts.fill(0);
    return this.counts;
  }

  /** This label set's record, found once and checked on every use: a reset replaces the map. */
  private record(internals: HistogramInternals): HistogramRecord | undefined {
    const map = internals.hashMap;
    if (typeof map !== 'object' || map === null) return undefined;
    if (this.key !== undefined && isRecord(map[this.key])) return map[this.key];
    this.key = undefined;
    for (const key of Object.keys(map)) {
      const record = map[key];
      if (isRecord(record) && this.holdsLabels(record)) {
        this.key = key;
        return record;
      }
    }
    return undefined;
  }

  private holdsLabels(record: HistogramRecord): boolean {
    const names = Object.keys(this.labels);
    if (Object.keys(record.labels).length !== names.length) return false;
    for (const name of names) if (record.labels[name] !== this.labels[name]) return false;
    return true;
  }
}
