/**
 * @module ratelimit/request-rules
 * The rule each descriptor of a request counts under: the one its own
 * `limit` asks for, else the one the limits give its entries, unless
 * another descriptor's rule replaces it.
 */
import { findRule, type LimitRule, type LimitTable } from './limits/index';
import { UNIT_SECONDS } from './limits/units';
import type { RateLimitRequest } from './types';

/** The rule a descriptor's own `limit` asks for, as envoyproxy/ratelimit honours it. */
function overrideRule(domain: string, limit: NonNullable<RateLimitRequest['descriptors'][number]['limit']>): LimitRule {
  return {
    fullKey: `${domain}.<override>`,
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    replaces: [],
    requestsPerUnit: limit.requestsPerUnit,
    windowMs: UNIT_SECONDS[limit.unit] * 1000,
    currentLimit: { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit },
  };
}

/** The rule of each of `descriptors` in `domain` under `table`, in their order; undefined where none applies. */
export function rulesOf(
  domain: string,
  descriptors: RateLimitRequest['descriptors'],
  table: LimitTable,
): (LimitRule | undefined)[] {
  const rules = new Array<LimitRule | undefined>(descriptors.length);
  if (!table.domains.has(domain)) return rules;
  for (let i = 0; i < descriptors.length; i++) {
    const d = descriptors[i];
    rules[i] = d.limit ? overrideRule(domain, d.limit) : findRule(table, domain, d.entries);
  }
  if (table.hasReplaces) {
    const replaced = new Set<string>();
    for (const rule of rules) if (rule) for (const name of rule.replaces) replaced.add(name);
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i];
      // An unlimited rule is answered before replacing, as envoyproxy/ratelimit does: it stays unlimited.
      if (rule?.name !== undefined && !rule.unlimited && replaced.has(rule.name)) rules[i] = undefined;
    }
  }
  return rules;
}
