/**
 * @module test/support/diag-sample
 * A gateway configuration and its snapshot, for the diag tests.
 */
import {
  authServiceSchema,
  mappingSchema,
  rateLimitServiceSchema,
  type GatewayConfig,
} from '../../src/gateway/config/schema';
import { describeGateway, trafficOf, type DiagExtras, type DiagSnapshot } from '../../src/diag';
import { createRouteCounters } from '../../src/telemetry';

const base = { apiVersion: 'gateway/v1' };

export function sampleConfig(): GatewayConfig {
  return {
    mappings: [
      mappingSchema.parse({
        ...base,
        kind: 'Mapping',
        name: 'hotels',
        prefix: '/v1/hotels/',
        service: 'hotel-booking',
        precedence: 1,
        labels: {
          gateway: [
            { request_label_group: [{ test_allow: { header: 'x-gateway-test-allow', omit_if_not_present: true } }] },
            { request_label_group: ['hotels', { user: { header: 'x-travel-user' } }] },
          ],
        },
      }),
      mappingSchema.parse({
        ...base,
        kind: 'Mapping',
        name: 'legacy',
        prefix: '/legacy/',
        service: 'legacy.internal:8080',
        rewrite: '',
        headers: { 'X-Canary': '<yes>', 'x-debug': true },
      }),
      mappingSchema.parse({
        ...base,
        kind: 'Mapping',
        name: 'diag',
        prefix: '/gateway/v0/diag',
        service: 'diag',
        method: 'get',
        cors: { origins: ['https://ops.example'] },
      }),
      mappingSchema.parse({
        ...base,
        kind: 'Mapping',
        name: '<script>alert(1)</script>',
        prefix: '/x/"&<b>',
        service: 'api',
        bypass_auth: true,
      }),
    ],
    authService: authServiceSchema.parse({
      ...base,
      kind: 'AuthService',
      name: 'basic-auth',
      auth_service: 'auth',
      allowed_authorization_headers: ['X-Travel-User'],
    }),
    rateLimitService: rateLimitServiceSchema.parse({
      ...base,
      kind: 'RateLimitService',
      name: 'limits',
      service: 'ratelimit.internal:8081',
      failure_mode_deny: true,
    }),
    sources: ['/etc/gatehouse/services.yaml', '/etc/gatehouse/extra.yaml'],
  };
}

export const BUILT_IN = new Set(['hotel-booking', 'car-booking', 'auth', 'ratelimit', 'api', 'diag']);

/**
 * What a running gateway adds to the sample: its dependencies (one cluster
 * with an endpoint ejected), a quarter of an hour of traffic (a burst of
 * 5xx on the legacy route, health probes that are not drawn), and its folder.
 */
export function sampleExtras(): DiagExtras {
  let t = Date.parse('2025-01-02T02:50:00Z');
  const counters = createRouteCounters({ now: () => t });
  for (let minute = 0; minute < 15; minute++) {
    for (let i = 0; i < 20 + minute * 3; i++) counters.record('hotels', i % 9 === 0 ? 401 : 200);
    for (let i = 0; i < 6; i++) counters.record('legacy', minute >= 10 && minute <= 12 ? 503 : 200);
    counters.record('unmatched', 404);
    for (let i = 0; i < 12; i++) counters.record('gateway-health', 200);
    t += 60_000;
  }
  t -= 60_000;
  return {
    dependencies: [
      { name: 'Redis', state: 'ok', detail: 'redis://10.0.0.3:6379: answers' },
      {
        name: 'Database',
        state: 'down',
        detail: 'PostgreSQL at postgres://gatehouse@db/gatehouse: connection refused',
      },
      { name: 'Rate-limit service', state: 'ok', detail: 'ratelimit.internal:8081 (domain gateway)' },
      { name: 'Auth service', state: 'ok', detail: 'built-in: 2 users' },
      {
        name: 'cluster_legacy_internal_8080',
        state: 'warn',
        detail: 'upstream cluster: 1 of 3 endpoints ejected for failing: 10.0.0.7:8080',
      },
    ],
    traffic: trafficOf(counters),
    folder: {
      files: [
        { name: 'README.txt', readAs: 'ignored', detail: 'not read: neither YAML (*.yaml, *.yml) nor users.htpasswd' },
        { name: 'limits.yaml', readAs: 'records', detail: 'no record; ignored: document 1 (domain gateway)' },
        { name: 'services.yaml', readAs: 'records', detail: '4 Mappings, 1 AuthService, 1 RateLimitService' },
        { name: 'users.htpasswd', readAs: 'users', detail: '2 users' },
      ],
      counts: {
        mappings: 4,
        authServices: 1,
        rateLimitServices: 1,
        modules: 0,
        emissaryResources: 0,
        otherAmbassadorId: 0,
        users: 2,
        limits: { files: 0, domains: 0, rules: 0 },
        ignored: 1,
      },
    },
  };
}

/** A snapshot of the sample config after a few requests; `configErrors` as a rejected reload left them. */
export function sampleSnapshot(configErrors: string[] = [], extras: DiagExtras = {}): DiagSnapshot {
  const counters = createRouteCounters();
  for (const status of [200, 200, 401, 502]) counters.record('hotels', status);
  counters.record('unmatched', 404);
  return describeGateway({
    version: '1.2.3',
    startedAt: new Date('2025-01-01T00:00:00Z'),
    now: new Date('2025-01-02T03:04:05Z'),
    config: sampleConfig(),
    configDir: '/etc/gatehouse',
    loadedAt: new Date('2025-01-01T00:00:01Z'),
    lastReloadAt: configErrors.length ? new Date('2025-01-02T00:00:00Z') : undefined,
    configErrors,
    modules: BUILT_IN,
    counters,
    ...extras,
  });
}

export const CONFIG_ERRORS = [
  "/etc/gatehouse/services.yaml: service hotels, Mapping 'hotels': prefix: must start with /",
  "/etc/gatehouse/extra.yaml: service <evil>, Mapping 'x': timeout_ms: expected number",
];
