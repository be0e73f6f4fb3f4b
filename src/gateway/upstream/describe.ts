/**
 * @module gateway/upstream/describe
 * A Mapping's upstream fields as `gatehouse check` and the diagnostic page
 * show them: the fields given, and one line that says them shortly.
 */
import { upstreamFieldsGiven } from '../config/mapping-upstream';
import type { MappingRecord } from '../config/schema';

/** The upstream fields a Mapping gives (`namespace` included), as written. */
export type UpstreamSettings = Partial<
  Pick<
    MappingRecord,
    | 'namespace'
    | 'endpoints'
    | 'connect_timeout_ms'
    | 'idle_timeout_ms'
    | 'cluster_idle_timeout_ms'
    | 'cluster_max_connection_lifetime_ms'
    | 'keepalive'
    | 'retry_policy'
    | 'circuit_breakers'
    | 'priority'
    | 'load_balancer'
    | 'enable_ipv4'
    | 'enable_ipv6'
    | 'dns_type'
    | 'respect_dns_ttl'
    | 'cluster_tag'
  >
>;

/** The upstream fields a Mapping gives, but those of `leftOut`; undefined when it gives none. */
export function upstreamSettings(m: MappingRecord, leftOut: readonly string[] = []): UpstreamSettings | undefined {
  const names = upstreamFieldsGiven(m).filter((name) => !leftOut.includes(name));
  if (m.namespace !== undefined) names.unshift('namespace');
  if (names.length === 0) return undefined;
  const given: Record<string, unknown> = {};
  for (const name of names) given[name] = structuredClone((m as unknown as Record<string, unknown>)[name]);
  return given;
}

/** The settings on one line: `retry 5xx x2 (per try 1s); breakers max_connections=1; lb least_request`. */
export function upstreamSummary(s: UpstreamSettings): string {
  const parts: string[] = [];
  if (s.namespace !== undefined) parts.push(`namespace ${s.namespace}`);
  if (s.endpoints !== undefined) parts.push(`endpoints ${s.endpoints.join(',')}`);
  const r = s.retry_policy;
  if (r !== undefined)
    parts.push(
      `retry ${r.retry_on} x${r.num_retries}${r.per_try_timeout !== undefined ? ` (per try ${r.per_try_timeout})` : ''}`,
    );
  for (const b of s.circuit_breakers ?? []) {
    const limits = (['max_connections', 'max_pending_requests', 'max_requests', 'max_retries'] as const)
      .filter((k) => b[k] !== undefined)
      .map((k) => `${k}=${b[k]}`);
    parts.push(`breakers ${b.priority}${limits.length > 0 ? ` ${limits.join(',')}` : ''}`);
  }
  if (s.priority !== undefined) parts.push(`priority ${s.priority}`);
  const lb = s.load_balancer;
  if (lb !== undefined) {
    const on =
      lb.header !== undefined
        ? ` header ${lb.header}`
        : lb.cookie !== undefined
          ? ` cookie ${lb.cookie.name}`
          : lb.source_ip
            ? ' source_ip'
            : '';
    parts.push(`lb ${lb.policy}${on}`);
  }
  const ms = (label: string, value: number | undefined) => value !== undefined && parts.push(`${label} ${value}ms`);
  ms('connect', s.connect_timeout_ms);
  ms('idle', s.idle_timeout_ms);
  ms('cluster idle', s.cluster_idle_timeout_ms);
  ms('lifetime', s.cluster_max_connection_lifetime_ms);
  if (s.keepalive !== undefined) parts.push(`keepalive ${JSON.stringify(s.keepalive).replace(/"/g, '')}`);
  if (s.enable_ipv4 !== undefined || s.enable_ipv6 !== undefined)
    parts.push(`ipv4 ${s.enable_ipv4 ?? true} ipv6 ${s.enable_ipv6 ?? false}`);
  if (s.dns_type !== undefined) parts.push(s.dns_type);
  if (s.respect_dns_ttl === true) parts.push('dns ttl');
  if (s.cluster_tag !== undefined) parts.push(`tag ${s.cluster_tag}`);
  return parts.join('; ');
}
