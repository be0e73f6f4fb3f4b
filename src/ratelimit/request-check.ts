/**
 * @module ratelimit/request-check
 * What a rate-limit request must be before anything of it is counted: a
 * domain, descriptors and entries within bounds, units the service knows,
 * and hits the stores can add exactly.
 */
import { descriptorsOverBound, entriesOverBound, type RequestBounds } from './bounds';
import { isRateLimitUnit } from './limits/units';
import type { RateLimitRequest } from './types';

/** A request the service cannot answer: the gRPC adapter maps it to INVALID_ARGUMENT. */
export class RateLimitRequestError extends Error {
  readonly code = 'INVALID_ARGUMENT';
  constructor(message: string) {
    super(message);
    this.name = 'RateLimitRequestError';
  }
}

/** The checks a descriptor needs before it is counted: its entries within bounds, its own limit's unit, and hits the stores can add exactly. */
function checkDescriptor(d: RateLimitRequest['descriptors'][number], i: number, bounds: RequestBounds): void {
  const entries = d.entries?.length ?? 0;
  if (entries > bounds.maxDescriptorEntries) throw new RateLimitRequestError(entriesOverBound(bounds, i, entries));
  if (d.limit && !isRateLimitUnit(d.limit.unit)) {
    throw new RateLimitRequestError(`descriptors[${i}].limit.unit: ${String(d.limit.unit)} is not a rate-limit unit`);
  }
  // Counters are doubles in the memory store and 64-bit integers in Redis: above 2^53 neither adds exactly.
  if (d.hitsAddend !== undefined && !(Number.isSafeInteger(d.hitsAddend) && d.hitsAddend >= 0)) {
    // Decoded as a double, a uint64 that large is rounded: the message does not repeat a number the client did not send.
    const why =
      d.hitsAddend > Number.MAX_SAFE_INTEGER
        ? `above ${Number.MAX_SAFE_INTEGER}, the largest count it may add`
        : `${d.hitsAddend} is not a whole number from 0`;
    throw new RateLimitRequestError(`descriptors[${i}].hits_addend: ${why}`);
  }
}

/** The descriptors of `request`, each fit to count; throws a {@link RateLimitRequestError} naming the first that is not. */
export function checkedDescriptors(request: RateLimitRequest, bounds: RequestBounds): RateLimitRequest['descriptors'] {
  if (typeof request.domain !== 'string' || request.domain === '') {
    throw new RateLimitRequestError('rate limit domain must not be empty');
  }
  const descriptors = request.descriptors ?? [];
  if (descriptors.length > bounds.maxDescriptors)
    throw new RateLimitRequestError(descriptorsOverBound(bounds, descriptors.length));
  for (let i = 0; i < descriptors.length; i++) checkDescriptor(descriptors[i], i, bounds);
  return descriptors;
}
