/**
 * @module ratelimit/limits-schema
 * The zod schema of a limits document in envoyproxy/ratelimit's YAML format,
 * so that a file written for that service loads here unchanged. Keys the
 * format does not know are refused, as it refuses them.
 */
import { z } from 'zod';
import { RATE_LIMIT_UNITS, isRateLimitUnit } from './units';

const UNIT_LIST = RATE_LIMIT_UNITS.join(', ');

/**
 * A string field. The YAML loader hands over a field's text as written; a
 * number or a boolean given in code is read as its text too. A null (`value:`
 * with nothing after it) is "", the Go zero value envoyproxy/ratelimit gets.
 */
const scalar = z
  .union([z.string(), z.number(), z.boolean(), z.null()], {
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string'),
  })
  .transform((v) => (v === null ? '' : String(v)));

const replacesSchema = z.strictObject({
  name: scalar.pipe(z.string().min(1, 'must not be empty')),
});

export const rateLimitRuleSchema = z
  .strictObject({
    /** Case-insensitive; required unless `unlimited`. */
    unit: scalar.optional(),
    /** As in envoyproxy/ratelimit, an absent count is 0: the rule refuses everything. */
    requests_per_unit: z
      .number({ error: 'must be a whole number from 0 to 4294967295' })
      .int('must be a whole number from 0 to 4294967295')
      .min(0, 'must be a whole number from 0 to 4294967295')
      .max(4_294_967_295, 'must be a whole number from 0 to 4294967295')
      .default(0),
    unlimited: z.boolean().default(false),
    name: scalar.optional(),
    replaces: z.array(replacesSchema).nullish(),
  })
  .transform((rule, ctx) => {
    const unit = rule.unit?.toUpperCase();
    const validUnit = isRateLimitUnit(unit);
    if (rule.unlimited && validUnit) {
      ctx.addIssue({ code: 'custom', path: ['unit'], message: 'must not be set when unlimited is true' });
    } else if (!rule.unlimited && !validUnit) {
      ctx.addIssue({ code: 'custom', path: ['unit'], message: `must be one of ${UNIT_LIST}` });
    }
    const replaces = (rule.replaces ?? []).map((r) => r.name);
    if (rule.name !== undefined && replaces.includes(rule.name)) {
      ctx.addIssue({ code: 'custom', path: ['replaces'], message: 'must not name the rule itself' });
    }
    return {
      unit: validUnit ? unit : undefined,
      requestsPerUnit: rule.requests_per_unit,
      unlimited: rule.unlimited,
      name: rule.name === '' ? undefined : rule.name,
      replaces,
    };
  });

/** One descriptor of the configuration, possibly nesting more. */
export interface DescriptorConfig {
  key: string;
  value?: string;
  rate_limit?: z.output<typeof rateLimitRuleSchema>;
  shadow_mode: boolean;
  /** Metrics only in envoyproxy/ratelimit; accepted and ignored. */
  detailed_metric?: boolean;
  /** Metrics only in envoyproxy/ratelimit; accepted and ignored. */
  value_to_metric?: boolean;
  /** Every value a wildcard (`value: prefix*`) matches counts against one shared limit. */
  share_threshold?: boolean;
  descriptors?: DescriptorConfig[] | null;
}

export const descriptorConfigSchema: z.ZodType<DescriptorConfig, unknown> = z.lazy(() =>
  z.strictObject({
    key: scalar.pipe(z.string().min(1, 'must not be empty')),
    value: scalar.optional(),
    rate_limit: rateLimitRuleSchema.optional(),
    shadow_mode: z.boolean().default(false),
    detailed_metric: z.boolean().optional(),
    value_to_metric: z.boolean().optional(),
    share_threshold: z.boolean().optional(),
    descriptors: z.array(descriptorConfigSchema).nullish(),
  }),
);

/** One YAML document: a domain and its descriptors. */
export const limitsDocumentSchema = z.strictObject({
  domain: scalar.pipe(z.string().min(1, 'must not be empty')),
  descriptors: z.array(descriptorConfigSchema).nullish(),
});

export type LimitsDocument = z.output<typeof limitsDocumentSchema>;
/** A document as written, before validation. */
export type LimitsDocumentInput = z.input<typeof limitsDocumentSchema>;

/** `descriptors[0].rate_limit.unit` from a zod issue path. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}
