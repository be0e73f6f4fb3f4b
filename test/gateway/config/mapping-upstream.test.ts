/**
 * The Mapping fields of a remote upstream (`namespace`, `endpoints`,
 * `retry_policy`, `circuit_breakers`, `priority`, the timeouts, `keepalive`,
 * `load_balancer`, the address families and DNS type, `cluster_tag`) load as
 * Emissary writes them; a bad value is a problem naming the field.
 */
import assert from 'node:assert/strict';
import { mappingFields } from '../../support/records';

const { at: AT, load, problems } = mappingFields('quote', 'quote-backend', '/backend/');

describe('gateway config: upstream Mapping fields', () => {
  it('loads them as Emissary writes them, with num_retries 1 and priority default unless given', () => {
    const m = load(`namespace: shop
endpoints: [10.0.0.1, "10.0.0.2:8081", "[fd00::1]", quote-0.quote]
retry_policy: {retry_on: "5xx,reset", per_try_timeout: 1.5s, retry_back_off: {base_interval: 0.05s, max_interval: 1s}}
circuit_breakers: [{max_connections: 10, max_pending_requests: 0}, {priority: high, max_requests: 50, max_retries: 0}]
priority: HIGH
connect_timeout_ms: 250
idle_timeout_ms: 0
cluster_idle_timeout_ms: 30000
cluster_max_connection_lifetime_ms: 600000
keepalive: {idle_time: 60, interval: 10, probes: 3}
load_balancer: {policy: ring_hash, cookie: {name: sticky, ttl: 1h}}
enable_ipv4: true
enable_ipv6: true
dns_type: logical_dns
respect_dns_ttl: false
cluster_tag: canary`);
    assert.equal(m.retry_policy?.num_retries, 1);
    assert.equal(m.circuit_breakers?.[0].priority, 'default');
    assert.equal(m.priority, 'high');
    assert.deepEqual(m.load_balancer, { policy: 'ring_hash', cookie: { name: 'sticky', ttl: '1h' } });
    assert.equal(load('load_balancer: {policy: ring_hash, header: X-User}').load_balancer?.header, 'x-user');
  });

  it('refuses each bad value with a problem naming the field', () => {
    const cases: [string, string][] = [
      ['namespace: Shop', 'namespace: must be a Kubernetes namespace (lower-case letters, digits and -, at most 63)'],
      ['endpoints: []', 'endpoints: must list at least one address'],
      [
        'endpoints: ["10.0.0.1:0"]',
        'endpoints.0: must be host or host:port (a DNS name or an IP address, [v6] in brackets; the port from 1 to 65535)',
      ],
      [
        'endpoints: ["http://10.0.0.1"]',
        'endpoints.0: must be host or host:port (a DNS name or an IP address, [v6] in brackets; the port from 1 to 65535)',
      ],
      ['retry_policy: {retry_on: 5xx, num_retries: -1}', 'retry_policy.num_retries: must be 0 or more'],
      [
        'retry_policy: {retry_on: "5xx,teapot"}',
        "retry_policy.retry_on: 'teapot' is not a condition: write 5xx, gateway-error, connect-failure, retriable-4xx, refused-stream, reset or retriable-status-codes (several separated by commas)",
      ],
      [
        'retry_policy: {retry_on: 5xx, per_try_timeout: 3}',
        'retry_policy.per_try_timeout: expected string, received number',
      ],
      [
        'retry_policy: {retry_on: 5xx, per_try_timeout: soon}',
        'retry_policy.per_try_timeout: must be a duration of 1 ms or more, as 250ms, 1s or 1.5s',
      ],
      ['retry_policy: {num_retries: 2}', 'retry_policy.retry_on: required (expected string)'],
      [
        'retry_policy: {retry_on: retriable-status-codes}',
        "retry_policy.retry_on: retriable-status-codes needs retriable_status_codes: the statuses to try again (a client's x-envoy-retriable-status-codes is not read)",
      ],
      [
        'retry_policy: {retry_on: 5xx, retriable_status_codes: [429]}',
        'retry_policy.retriable_status_codes: applies to retry_on: retriable-status-codes, which is not given',
      ],
      [
        'retry_policy: {retry_on: 5xx, retry_back_off: {base_interval: 1s, max_interval: 10ms}}',
        'retry_policy.retry_back_off.max_interval: must not be shorter than base_interval',
      ],
      ['circuit_breakers: {max_connections: 1}', 'circuit_breakers: expected array, received object'],
      ['circuit_breakers: [{max_connections: 0}]', 'circuit_breakers.0.max_connections: must be 1 or more'],
      ['circuit_breakers: [{max_requests: 1.5}]', 'circuit_breakers.0.max_requests: must be a whole number'],
      ['circuit_breakers: [{priority: urgent}]', 'circuit_breakers.0.priority: must be default or high'],
      ['circuit_breakers: [{max_retries: 1}, {max_retries: 2}]', 'circuit_breakers.1.priority: default is given twice'],
      ['circuit_breakers: [{max_conections: 1}]', 'circuit_breakers.0.max_conections: unknown field'],
      ['priority: urgent', 'priority: must be default or high'],
      ['connect_timeout_ms: 0', 'connect_timeout_ms: must be at least 1'],
      ['idle_timeout_ms: -1', 'idle_timeout_ms: must be 0 (none) or more'],
      [
        'cluster_idle_timeout_ms: 0',
        'cluster_idle_timeout_ms: must be at least 1: an idle connection is closed after it',
      ],
      [
        'cluster_max_connection_lifetime_ms: 2.5',
        'cluster_max_connection_lifetime_ms: must be a whole number of milliseconds',
      ],
      ['keepalive: {idle_time: 0}', 'keepalive.idle_time: must be 1 second or more'],
      [
        'load_balancer: {policy: random}',
        'load_balancer.policy: must be round_robin, least_request, ring_hash or maglev',
      ],
      [
        'load_balancer: {policy: round_robin, header: x-user}',
        'load_balancer.header: applies to ring_hash and maglev, not round_robin',
      ],
      [
        'load_balancer: {policy: ring_hash}',
        'load_balancer: ring_hash hashes on one of header, cookie or source_ip: give exactly one',
      ],
      [
        'load_balancer: {policy: maglev, header: x-user, source_ip: true}',
        'load_balancer: maglev hashes on one of header, cookie or source_ip: give exactly one',
      ],
      [
        'load_balancer: {policy: ring_hash, cookie: {name: s, ttl: forever}}',
        'load_balancer.cookie.ttl: must be a duration of 1 ms or more, as 250ms, 1s or 1.5s',
      ],
      ['enable_ipv4: false', 'enable_ipv4: false leaves no address family: set enable_ipv6: true for IPv6 only'],
      ['dns_type: eds', 'dns_type: must be strict_dns or logical_dns'],
      ['respect_dns_ttl: sometimes', 'respect_dns_ttl: expected boolean, received string'],
      ['cluster_tag: "a b"', 'cluster_tag: must be letters, digits, _, . or -'],
      [
        'resolver: endpoint',
        'resolver: an Emissary field not supported here but for kubernetes-service, its default: names are looked up in DNS as Kubernetes resolves a Service; list addresses in endpoints, or remove the field',
      ],
    ];
    for (const [field, message] of cases) assert.deepEqual(problems(field), [`${AT} ${message}`], field);
  });
});
