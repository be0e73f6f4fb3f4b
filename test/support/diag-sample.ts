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
import { describeGateway, type DiagSnapshot } from '../../src/diag';
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

/** A snapshot of the sample config after a few requests; `configErrors` as a rejected reload left them. */
export function sampleSnapshot(configErrors: string[] = []): DiagSnapshot {
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
  });
}

export const CONFIG_ERRORS = [
  "/etc/gatehouse/services.yaml: service hotels, Mapping 'hotels': prefix: must start with /",
  "/etc/gatehouse/extra.yaml: service <evil>, Mapping 'x': timeout_ms: expected number",
];
