/**
 * @module test/support/records
 * Config records as a test writes them: loose Mappings for a config built
 * from records, parsed records with their defaults as the loader gives
 * them, the demo's labels, Service manifests, and a valid config from
 * records.
 */
import assert from 'node:assert/strict';
import { configFromRecords, parseConfigFiles, type GatewayConfig } from '../../src/gateway';
import {
  authServiceSchema,
  mappingSchema,
  rateLimitServiceSchema,
  type AuthServiceRecord,
  type MappingRecord,
  type RateLimitServiceRecord,
} from '../../src/gateway/config/schema';

let counter = 0;

/**
 * A Mapping record with defaults for what a test does not care about. Its
 * `timeout_ms` is 0 (none) unless `extra` sets one: the default 3 s is a
 * production budget, which a loaded machine can make an upstream of the
 * test's own outlast, and a test that is not about time would read its
 * 504 for the answer it checks.
 */
export function mapping(prefix: string, service: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'gateway/v1', kind: 'Mapping', name: `m${++counter}`, prefix, service, timeout_ms: 0, ...extra };
}

/** A valid configuration from records; fails the test when it is not valid. */
export function configOf(...records: unknown[]): GatewayConfig {
  const result = configFromRecords(records);
  if (!result.ok) assert.fail(result.problems.map((p) => p.text).join('\n'));
  return result.config;
}

/** The labels block of the demo's services.yaml, as config/ratelimit.yaml expects it. */
export const DEMO_LABELS = {
  gateway: [
    {
      request_label_group: [{ 'x-gateway-test-allow': { header: 'x-gateway-test-allow', omit_if_not_present: true } }],
    },
    { request_label_group: [{ user: { header: 'x-travel-user', omit_if_not_present: false } }] },
  ],
};

/** A Mapping record of `/v1/hotels` with its defaults, as the config loader gives it. */
export function mappingRecord(fields: Partial<Record<keyof MappingRecord, unknown>> = {}): MappingRecord {
  return mappingSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'Mapping',
    name: 'hotels',
    prefix: '/v1/hotels',
    service: 'hotel-booking',
    ...fields,
  });
}

/** {@link mappingRecord} with the demo's labels ({@link DEMO_LABELS}) unless `fields` say otherwise. */
export function labelledMappingRecord(fields: Partial<Record<keyof MappingRecord, unknown>> = {}): MappingRecord {
  return mappingRecord({ labels: DEMO_LABELS, ...fields });
}

/** An AuthService record with its defaults. */
export function authRecord(fields: Partial<Record<keyof AuthServiceRecord, unknown>>): AuthServiceRecord {
  return authServiceSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'AuthService',
    name: 'authentication',
    auth_service: 'auth',
    ...fields,
  });
}

/** A RateLimitService record with its defaults. */
export function rateLimitRecord(
  fields: Partial<Record<keyof RateLimitServiceRecord, unknown>> = {},
): RateLimitServiceRecord {
  return rateLimitServiceSchema.parse({
    apiVersion: 'gateway/v1',
    kind: 'RateLimitService',
    name: 'limits',
    service: 'ratelimit',
    ...fields,
  });
}

/** A Kubernetes Service manifest named `name` whose annotation (`<domain>/config`) holds `records`. */
export function serviceManifest(name: string, records: string, domain = 'gatehouse.io'): string {
  const indented = records
    .trim()
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  annotations:
    ${domain}/config: |
${indented}
spec:
  ports:
    - port: 80
`;
}

/** Loading one Mapping, written in a Service manifest with extra fields, as `config/services.yaml`. */
export interface MappingFields {
  /** Where its problems are said to be: `<file>: service <service>: Mapping <name>:`. */
  readonly at: string;
  /** The Mapping with `fields` (YAML lines) added; fails the test when it is refused. */
  load(fields: string): MappingRecord;
  /** The problems of the Mapping with `fields` added; fails the test when it loads. */
  problems(fields: string): string[];
}

/** A Mapping of `prefix` to a remote address in the manifest of `service`, to load with fields added. */
export function mappingFields(service: string, name: string, prefix: string): MappingFields {
  const file = 'config/services.yaml';
  const parse = (fields: string) =>
    parseConfigFiles([
      {
        file,
        text: serviceManifest(
          service,
          `apiVersion: gateway/v1\nkind: Mapping\nname: ${name}\nprefix: ${prefix}\nservice: 127.0.0.1:9\n${fields.trim()}\n`,
        ),
      },
    ]);
  return {
    at: `${file}: service ${service}: Mapping ${name}:`,
    load(fields) {
      const result = parse(fields);
      if (!result.ok) assert.fail(result.problems.map((p) => p.text).join('\n'));
      return result.config.mappings[0];
    },
    problems(fields) {
      const result = parse(fields);
      assert.equal(result.ok, false, 'the config should have been refused');
      return result.ok ? [] : result.problems.map((p) => p.text);
    },
  };
}
