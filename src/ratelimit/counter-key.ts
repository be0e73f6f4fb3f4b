/**
 * @module ratelimit/counter-key
 * The key of a descriptor's counter in the store: the domain, the entries
 * and the window, `<domain>_<key>_<value>_..._<window start in seconds>`,
 * with `_` and `\` escaped inside the parts so that no two descriptors
 * share a key.
 */
import { createHash } from 'node:crypto';
import type { LimitRule } from './limits/index';
import type { DescriptorEntry } from './types';

/**
 * Longest entries part kept as written. A value is whatever a client sent
 * (a header, a gRPC field of up to 4 MiB), and a counter lives as long as its
 * window: a memory store bounded by its number of counters, or a Redis, would
 * otherwise hold as many bytes as clients care to send. Longer parts are
 * replaced by their SHA-256.
 */
export const MAX_KEY_PART = 200;

function escapeKeyPart(part: string): string {
  return part.includes('_') || part.includes('\\') ? part.replace(/[\\_]/g, '\\$&') : part;
}

/** The counter key of `entries` under `rule` (whose shared wildcards stand for their values) in the window starting at `windowStart` ms. */
export function counterKey(
  domain: string,
  entries: readonly DescriptorEntry[],
  rule: LimitRule,
  windowStart: number,
): string {
  let part = '';
  const shared = rule.sharedValues;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    part += `_${escapeKeyPart(e.key)}_${escapeKeyPart(shared?.[i] ?? e.value)}`;
  }
  // `\#` is found in no escaped part (a `\` there is followed by `\` or `_`): a hash never reads as a value.
  if (part.length > MAX_KEY_PART) part = `_\\#${createHash('sha256').update(part).digest('base64url')}`;
  return `${escapeKeyPart(domain)}${part}_${windowStart / 1000}`;
}
