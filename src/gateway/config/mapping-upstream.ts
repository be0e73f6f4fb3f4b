/**
 * @module gateway/config/mapping-upstream
 * The Mapping fields that say how a remote upstream is reached, as Emissary's
 * Mapping writes them: the Kubernetes `namespace` a bare service name is
 * looked for in, `retry_policy`, `circuit_breakers` and the `priority` that
 * picks their thresholds, the connection timeouts and lifetimes,
 * `keepalive`, `load_balancer`, the address families and DNS type, and
 * Gatehouse's own `endpoints` (several addresses for one service).
 */
import { z } from 'zod';
import { parseDuration, retryConditions } from '../upstream/retry';
import { DEFAULT_CLUSTER_DOMAIN, parseEndpointAddress } from '../upstream/service';

const ms = (min: number, why: string) =>
  z
    .number()
    .int('must be a whole number of milliseconds')
    .min(min, why)
    .max(86_400_000, 'must be at most 86400000 (a day)');

/** A Kubernetes namespace: an RFC 1123 label. */
const namespace = z
  .string()
  .regex(
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be a Kubernetes namespace (lower-case letters, digits and -, at most 63)',
  );

/** A duration as Emissary writes one: `1s`, `1.5s`, `250ms`. */
const duration = z
  .string()
  .refine((d) => (parseDuration(d) ?? 0) >= 1, 'must be a duration of 1 ms or more, as 250ms, 1s or 1.5s');

const retryPolicy = z.strictObject({
  retry_on: z.string().superRefine((text, ctx) => {
    const { unknown } = retryConditions(text);
    if (unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `'${unknown.join("', '")}' is not a condition: write 5xx, gateway-error, connect-failure, retriable-4xx, refused-stream, reset or retriable-status-codes (several separated by commas)`,
      });
    }
  }),
  num_retries: z
    .number()
    .int('must be a whole number')
    .min(0, 'must be 0 or more')
    .max(100, 'must be at most 100')
    .default(1),
  per_try_timeout: duration.optional(),
  retry_back_off: z
    .strictObject({
      base_interval: duration,
      max_interval: duration.optional(),
    })
    .optional(),
  /** The statuses `retriable-status-codes` tries again (Envoy's field of that name; the client's `x-envoy-retriable-status-codes` is never read). */
  retriable_status_codes: z.array(z.number().int().min(100).max(599, 'must be an HTTP status')).min(1).optional(),
});

const count = (min: number) =>
  z.number().int('must be a whole number').min(min, `must be ${min} or more`).max(1_000_000, 'must be at most 1000000');

/** One set of `circuit_breakers` thresholds, Envoy's, for a priority. */
export const circuitBreaker = z.strictObject({
  priority: z.enum(['default', 'high'], { error: 'must be default or high' }).default('default'),
  max_connections: count(1).optional(),
  max_pending_requests: count(0).optional(),
  max_requests: count(1).optional(),
  max_retries: count(0).optional(),
});

const loadBalancer = z.strictObject({
  policy: z.enum(['round_robin', 'least_request', 'ring_hash', 'maglev'], {
    error: 'must be round_robin, least_request, ring_hash or maglev',
  }),
  header: z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name')
    .transform((h) => h.toLowerCase())
    .optional(),
  cookie: z
    .strictObject({
      name: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a cookie name'),
      path: z.string().startsWith('/', 'must start with /').optional(),
      ttl: duration.optional(),
    })
    .optional(),
  source_ip: z.boolean().optional(),
});

/** The fields, spread into the Mapping schema. */
export const upstreamMappingFields = {
  /** The Kubernetes namespace of the record: a bare service name is the Service of that name there. */
  namespace: namespace.optional(),
  /** Addresses (`host[:port]`) that serve the service, in place of what its name resolves to. */
  endpoints: z
    .array(
      z
        .string()
        .refine(
          (e) => parseEndpointAddress(e, 80, { clusterDomain: DEFAULT_CLUSTER_DOMAIN }) !== undefined,
          'must be host or host:port (a DNS name or an IP address, [v6] in brackets; the port from 1 to 65535)',
        ),
    )
    .min(1, 'must list at least one address')
    .optional(),
  connect_timeout_ms: ms(1, 'must be at least 1').optional(),
  idle_timeout_ms: ms(0, 'must be 0 (none) or more').optional(),
  cluster_idle_timeout_ms: ms(1, 'must be at least 1: an idle connection is closed after it').optional(),
  cluster_max_connection_lifetime_ms: ms(1, 'must be at least 1').optional(),
  keepalive: z
    .strictObject({
      idle_time: z.number().int().min(1, 'must be 1 second or more').optional(),
      interval: z.number().int().min(1, 'must be 1 second or more').optional(),
      probes: z.number().int().min(1, 'must be 1 or more').optional(),
    })
    .optional(),
  retry_policy: retryPolicy.optional(),
  circuit_breakers: z.array(circuitBreaker).min(1, 'must list at least one set of thresholds').optional(),
  /** Which thresholds of `circuit_breakers` the Mapping's requests count against. */
  priority: z
    .string()
    .transform((p) => p.toLowerCase())
    .pipe(z.enum(['default', 'high'], { error: 'must be default or high' }))
    .optional(),
  load_balancer: loadBalancer.optional(),
  enable_ipv4: z.boolean().optional(),
  enable_ipv6: z.boolean().optional(),
  dns_type: z.enum(['strict_dns', 'logical_dns'], { error: 'must be strict_dns or logical_dns' }).optional(),
  /** `true`: a name is looked up again once its DNS records' TTL has passed, rather than every 5 s. */
  respect_dns_ttl: z.boolean().optional(),
  /** A name that gives the Mapping an upstream cluster of its own, apart from other Mappings of the same service. */
  cluster_tag: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, _, . or -')
    .optional(),
};

type UpstreamFields = {
  retry_policy?: z.output<typeof retryPolicy>;
  circuit_breakers?: z.output<typeof circuitBreaker>[];
  load_balancer?: z.output<typeof loadBalancer>;
  enable_ipv4?: boolean;
  enable_ipv6?: boolean;
};

/** What no single field can say is wrong with the upstream fields: fields that contradict each other. */
export function upstreamMappingChecks(m: UpstreamFields, ctx: z.RefinementCtx): void {
  const problem = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const retry = m.retry_policy;
  if (retry !== undefined) {
    const on = retry.retry_on.split(',').map((c) => c.trim());
    if (on.includes('retriable-status-codes') && retry.retriable_status_codes === undefined) {
      problem(
        ['retry_policy', 'retry_on'],
        "retriable-status-codes needs retriable_status_codes: the statuses to try again (a client's x-envoy-retriable-status-codes is not read)",
      );
    }
    if (retry.retriable_status_codes !== undefined && !on.includes('retriable-status-codes')) {
      problem(
        ['retry_policy', 'retriable_status_codes'],
        'applies to retry_on: retriable-status-codes, which is not given',
      );
    }
    const back = retry.retry_back_off;
    if (back?.max_interval !== undefined && parseDuration(back.max_interval)! < parseDuration(back.base_interval)!) {
      problem(['retry_policy', 'retry_back_off', 'max_interval'], 'must not be shorter than base_interval');
    }
  }
  const seen = new Set<string>();
  m.circuit_breakers?.forEach((breaker, i) => {
    if (seen.has(breaker.priority)) problem(['circuit_breakers', i, 'priority'], `${breaker.priority} is given twice`);
    seen.add(breaker.priority);
  });
  const lb = m.load_balancer;
  if (lb !== undefined) {
    const keys = (['header', 'cookie', 'source_ip'] as const).filter((k) => lb[k] !== undefined && lb[k] !== false);
    if ((lb.policy === 'round_robin' || lb.policy === 'least_request') && keys.length > 0) {
      problem(['load_balancer', keys[0]], `applies to ring_hash and maglev, not ${lb.policy}`);
    }
    if ((lb.policy === 'ring_hash' || lb.policy === 'maglev') && keys.length !== 1) {
      problem(['load_balancer'], `${lb.policy} hashes on one of header, cookie or source_ip: give exactly one`);
    }
  }
  if (m.enable_ipv4 === false && m.enable_ipv6 !== true) {
    problem(['enable_ipv4'], 'false leaves no address family: set enable_ipv6: true for IPv6 only');
  }
}

/** The fields of {@link upstreamMappingFields} a Mapping gives, but `namespace`: they apply to remote upstreams only. */
export function upstreamFieldsGiven(m: object): string[] {
  return Object.keys(upstreamMappingFields).filter(
    (name) => name !== 'namespace' && (m as Record<string, unknown>)[name] !== undefined,
  );
}
