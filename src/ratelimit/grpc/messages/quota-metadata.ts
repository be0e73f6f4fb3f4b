/**
 * @module ratelimit/grpc/messages/quota-metadata
 * The dynamic metadata of quota mode, in the shape envoyproxy/ratelimit gives
 * it (its `ratelimitToMetadata`), so that whatever reads it there (an Envoy
 * routing on `envoy.filters.http.ratelimit` metadata, an access log) reads
 * it here too.
 */
import type { QuotaModeMetadata, RateLimitRequest } from '../../types';

/**
 * The metadata of a request that matched a quota-mode limit: its domain, each
 * descriptor's entries as `key=value` (and its own `hitsAddend` when it gave
 * one), the request's `hitsAddend` when not 0, and the indexes of the
 * descriptors over their quota, when any is.
 */
export function quotaModeMetadata(request: RateLimitRequest, violations: number[] | undefined): QuotaModeMetadata {
  const descriptors = request.descriptors.map((d) => {
    const out: { entries: string[]; hitsAddend?: number } = { entries: d.entries.map((e) => `${e.key}=${e.value}`) };
    if (d.hitsAddend !== undefined) out.hitsAddend = d.hitsAddend;
    return out;
  });
  const metadata: QuotaModeMetadata = { domain: request.domain, descriptors, quotaModeEnabled: true };
  if (request.hitsAddend) metadata.hitsAddend = request.hitsAddend;
  if (violations) metadata.quotaModeViolations = violations;
  return metadata;
}
