/**
 * @module ratelimit/bounds
 * How much one rate-limit request may carry, and the words it is refused
 * with past that: the in-process service and the gRPC face (which counts on
 * the wire, before decoding) refuse alike.
 */

/** What one request may carry. */
export interface RequestBounds {
  /** Most descriptors in one request. */
  readonly maxDescriptors: number;
  /** Most entries in one descriptor. */
  readonly maxDescriptorEntries: number;
}

/**
 * Most descriptors one request may carry. An Envoy sends one per rate-limit
 * action of a route, a handful; a request of many thousands would push as
 * many counters into the store at once (evicting live ones from a full
 * memory store, or outlasting Redis's timeout and reading as an outage).
 */
export const MAX_DESCRIPTORS = 1000;

/**
 * Most entries one descriptor may carry by default. Envoy's rate-limit
 * filter sends one per action of a descriptor, a handful; each entry is a
 * level of nesting in the limits, which seldom go past a few.
 */
export const MAX_DESCRIPTOR_ENTRIES = 64;

export const DEFAULT_REQUEST_BOUNDS: RequestBounds = Object.freeze({
  maxDescriptors: MAX_DESCRIPTORS,
  maxDescriptorEntries: MAX_DESCRIPTOR_ENTRIES,
});

/** The refusal of a request of `count` descriptors. */
export function descriptorsOverBound(bounds: RequestBounds, count: number): string {
  return `a request carries at most ${bounds.maxDescriptors} descriptors, this one ${count}`;
}

/** The refusal of a request whose descriptor `index` has `count` entries. */
export function entriesOverBound(bounds: RequestBounds, index: number, count: number): string {
  return `descriptors[${index}]: a descriptor carries at most ${bounds.maxDescriptorEntries} entries, this one ${count}`;
}

/** Throws a RangeError naming `name` unless `value` is a whole number of at least 1. */
export function checkBound(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a whole number of 1 or more, got ${String(value)}`);
  return value;
}
