/**
 * @module ratelimit/limits/schema
 * The zod schema of a limits document in envoyproxy/ratelimit's YAML format,
 * so that a file written for that service loads here unchanged. Keys are
 * checked apart (see limits-keys), as that service checks them: the schema
 * leaves out the keys it does not read at a place.
 */
import { z } from 'zod';
import { RATE_LIMIT_UNITS, isRateLimitUnit } from './units';

const UNIT_LIST = RATE_LIMIT_UNITS.join(', ');
const COUNT_ERROR = 'must be a whole number from 0 to 4294967295 (decimal, 0x hex, 0o or 0 octal, 0b binary)';

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

/**
 * A Go bool field: `true` or `false` (the YAML reader gives `yes`, `on`, `y`
 * and their opposites as booleans too); no value at all is false, Go's zero
 * value. A quoted string is refused, as yaml.v2 refuses it.
 */
const flag = z
  .boolean({ error: 'must be true or false (or yes/no, on/off, y/n, unquoted)' })
  .nullish()
  .transform((v) => v === true);

const replacesSchema = z.object({
  name: scalar.pipe(z.string().min(1, 'must not be empty')),
});

export const rateLimitRuleSchema = z
  .object({
    /** Case-insensitive; required unless `unlimited`. */
    // Checked here as well as below, so that a bad unit is said with the rule's other problems.
    unit: scalar
      .optional()
      .refine((u) => u === undefined || u === '' || isRateLimitUnit(u.toUpperCase()), `must be one of ${UNIT_LIST}`),
    /** As in envoyproxy/ratelimit, an absent or empty count is 0: the rule refuses everything. */
    requests_per_unit: z
      .number({ error: COUNT_ERROR })
      // One check, so that a count wrong in two ways is said once.
      .refine((n) => Number.isInteger(n) && n >= 0 && n <= 4_294_967_295, COUNT_ERROR)
      .nullish()
      .transform((v) => v ?? 0),
    unlimited: flag,
    name: scalar.optional(),
    replaces: z.array(replacesSchema).nullish(),
  })
  .transform((rule, ctx) => {
    const unit = rule.unit?.toUpperCase();
    const validUnit = isRateLimitUnit(unit);
    if (rule.unlimited && validUnit) {
      ctx.addIssue({ code: 'custom', path: ['unit'], message: 'must not be set when unlimited is true' });
    } else if (!rule.unlimited && !validUnit && (rule.unit === undefined || rule.unit === '')) {
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
  detailed_metric: boolean;
  /** Metrics only in envoyproxy/ratelimit; accepted and ignored. */
  value_to_metric: boolean;
  /** Every value a wildcard (`value: files/*`) matches counts against one shared limit. */
  share_threshold: boolean;
  /** A soft limit: counted, never refusing; going over it is said in the response's dynamic metadata. */
  quota_mode: boolean;
  descriptors?: DescriptorConfig[] | null;
}

export const descriptorConfigSchema: z.ZodType<DescriptorConfig, unknown> = z.lazy(() =>
  z.object({
    key: scalar.pipe(z.string().min(1, 'must not be empty')),
    value: scalar.optional(),
    rate_limit: rateLimitRuleSchema.nullish().transform((v) => v ?? undefined),
    shadow_mode: flag,
    detailed_metric: flag,
    value_to_metric: flag,
    share_threshold: flag,
    quota_mode: flag,
    descriptors: z.array(descriptorConfigSchema).nullish(),
  }),
);

/** One YAML document: a domain and its descriptors. */
export const limitsDocumentSchema = z.object({
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
