/**
 * @module gateway/config/validate
 * Turns raw records (parsed YAML, or objects written in code) into a
 * {@link GatewayConfig}: each record checked with its zod schema, names unique
 * per kind, at most one AuthService, one RateLimitService, one Module and one TracingService, CORS
 * policies that can be applied. Every problem is collected; a configuration
 * with any problem is not produced at all.
 */
import type { z } from 'zod';
import { corsPolicyProblems, type CorsPolicy } from '../../cors';
import { errorText } from '../../files';
import { configProblem, type ConfigProblem, type ProblemLocation } from './problems';
import { addTlsRecord, TLS_RECORD_SCHEMAS, uniqueName, type TlsRecords } from './tls';
import {
  authServiceSchema,
  mappingSchema,
  moduleSchema,
  rateLimitServiceSchema,
  tracingServiceSchema,
  type GatewayConfig,
  type GatewayRecord,
  type RecordSource,
} from './schema';

/** A record as read, before validation. */
export interface RawRecord {
  readonly value: unknown;
  readonly source?: RecordSource;
  /** Its 1-based place among the records of its file or annotation: the name shown when it has none. */
  readonly index?: number;
}

/** Either a whole, valid configuration or everything wrong with it. */
export type ConfigResult = { ok: true; config: GatewayConfig } | { ok: false; problems: ConfigProblem[] };

const SCHEMAS = {
  Mapping: mappingSchema,
  AuthService: authServiceSchema,
  RateLimitService: rateLimitServiceSchema,
  Module: moduleSchema,
  TracingService: tracingServiceSchema,
  ...TLS_RECORD_SCHEMAS,
} as const;

/** Kinds of which a configuration holds one at most. */
type Singleton = 'AuthService' | 'RateLimitService' | 'Module' | 'TracingService';

type Kind = keyof typeof SCHEMAS;

/** The record kinds the gateway knows. */
export const RECORD_KINDS: readonly string[] = Object.keys(SCHEMAS);

function isTls(record: GatewayRecord): record is Extract<GatewayRecord, { kind: keyof typeof TLS_RECORD_SCHEMAS }> {
  return record.kind in TLS_RECORD_SCHEMAS;
}

function isKind(kind: string): kind is Kind {
  return Object.prototype.hasOwnProperty.call(SCHEMAS, kind);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `a ${typeof value}`;
}

function where(source: RecordSource | undefined): string {
  if (!source) return '';
  return ` (in ${source.file}${source.service ? `, service ${source.service}` : ''})`;
}

/** One zod issue as one or more messages; unknown keys are reported one by one. */
function issueMessages(
  issue: z.core.$ZodIssue,
  prefix: readonly PropertyKey[] = [],
): { path: PropertyKey[]; message: string }[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: [...path, key], message: 'unknown field' }));
  }
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // The alternative that got furthest into the value is the one that was meant.
    // A loop, not Math.max(...): a list of 200 000 wrong items would overflow the stack as arguments.
    const depth = (issues: z.core.$ZodIssue[]) =>
      issues.reduce((most, i) => (i.path.length > most ? i.path.length : most), -Infinity);
    const meant = issue.errors.reduce((best, branch) => (depth(branch) > depth(best) ? branch : best));
    if (depth(meant) > 0) return meant.flatMap((i) => issueMessages(i, path));
    // Every alternative refused the type itself: say which types would do.
    const types = issue.errors.map((branch) =>
      branch.length === 1 && branch[0].code === 'invalid_type' ? branch[0] : undefined,
    );
    if (types.every((t) => t !== undefined)) {
      const expected = [...new Set(types.map((t) => t.expected))].join(' or ');
      const missing = types.every((t) => /received undefined$/.test(t.message));
      return [{ path, message: missing ? `required (expected ${expected})` : `expected ${expected}` }];
    }
  }
  let message = issue.message.replace(/^Invalid input: /, '');
  if (issue.code === 'invalid_type' && /received undefined$/.test(message)) {
    message = `required (${message.replace(/, received undefined$/, '')})`;
  }
  return [{ path, message }];
}

/** The problems of a CORS policy at `path` of a record, as config problems. */
function corsProblems(policy: CorsPolicy | undefined, at: ProblemLocation, path: string): ConfigProblem[] {
  if (!policy) return [];
  return corsPolicyProblems(policy).map((text) => {
    // `origins: 'x' is not an origin`: the field goes into the path.
    const colon = text.indexOf(': ');
    const field = colon > 0 && /^[a-z_]+$/.test(text.slice(0, colon)) ? text.slice(0, colon) : '';
    return configProblem({ ...at, path: field ? `${path}.${field}` : path }, field ? text.slice(colon + 2) : text);
  });
}

/**
 * Validates raw records and assembles them into a configuration, in the order
 * given. `sources` becomes the configuration's `sources`; `problems` found
 * earlier (while reading files) are reported with the rest.
 */
export function assembleConfig(
  records: readonly RawRecord[],
  sources: readonly string[] = [],
  earlier: readonly ConfigProblem[] = [],
): ConfigResult {
  const problems: ConfigProblem[] = [...earlier];
  const mappings: GatewayConfig['mappings'] = [];
  const recordSources = new Map<GatewayRecord, RecordSource>();
  const seen: Record<Kind, Map<string, RecordSource | undefined>> = {
    Mapping: new Map(),
    AuthService: new Map(),
    RateLimitService: new Map(),
    Module: new Map(),
    Host: new Map(),
    TLSContext: new Map(),
    Secret: new Map(),
    TracingService: new Map(),
  };
  const tls: TlsRecords = { hosts: [], tlsContexts: [], secrets: [] };
  const singletons: Partial<Record<Singleton, GatewayRecord>> = {};

  records.forEach((raw, i) => {
    try {
      checkRecord(raw, i);
    } catch (err) {
      // Whatever a record could still throw is a problem of that record, never the end of a reload.
      problems.push(
        configProblem(
          { source: raw.source, record: `#${raw.index ?? i + 1}` },
          `cannot be validated: ${errorText(err)}`,
        ),
      );
    }
  });

  function checkRecord(raw: RawRecord, i: number): void {
    const { value, source } = raw;
    const fallbackName = `#${raw.index ?? i + 1}`;
    if (!isPlainObject(value)) {
      problems.push(
        configProblem({ source, record: fallbackName }, `expected a record (a YAML mapping), got ${describe(value)}`),
      );
      return;
    }
    const record = typeof value.name === 'string' && value.name !== '' ? value.name : fallbackName;
    const kind = value.kind;
    if (typeof kind !== 'string') {
      const message = kind === undefined ? 'required' : `expected a string, got ${describe(kind)}`;
      problems.push(configProblem({ source, record, path: 'kind' }, message));
      return;
    }
    if (!isKind(kind)) {
      const message = `unknown kind '${kind}'; expected one of ${RECORD_KINDS.join(', ')}`;
      problems.push(configProblem({ source, record, path: 'kind' }, message));
      return;
    }
    const parsed = SCHEMAS[kind].safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        for (const { path, message } of issueMessages(issue)) {
          problems.push(configProblem({ source, kind, record, path }, message));
        }
      }
      return;
    }
    const names = seen[kind];
    const data = parsed.data;
    const key = uniqueName(data);
    if (names.has(key)) {
      problems.push(
        configProblem(
          { source, kind, record, path: 'name' },
          `duplicate name: another ${kind} is named '${key}'${where(names.get(key))}`,
        ),
      );
      return;
    }
    const first = data.kind === 'Mapping' || isTls(data) ? undefined : singletons[data.kind];
    if (first) {
      const message = `only one ${kind} is allowed; '${first.name}'${where(recordSources.get(first))} is the first`;
      problems.push(configProblem({ source, kind, record }, message));
      return;
    }
    const cors = data.kind === 'Mapping' ? data.cors : data.kind === 'Module' ? data.config.cors : undefined;
    const policyProblems = corsProblems(
      cors,
      { source, kind, record },
      data.kind === 'Module' ? 'config.cors' : 'cors',
    );
    if (policyProblems.length > 0) {
      problems.push(...policyProblems);
      return;
    }
    names.set(key, source);
    if (source) recordSources.set(data, source);
    if (data.kind === 'Mapping') mappings.push(data);
    else if (isTls(data)) addTlsRecord(tls, data);
    else singletons[data.kind] = data;
  }

  if (problems.length > 0) return { ok: false, problems };
  const config: GatewayConfig = { mappings, sources: [...sources] };
  const {
    AuthService: authService,
    RateLimitService: rateLimitService,
    Module: module,
    TracingService: tracing,
  } = singletons;
  if (authService?.kind === 'AuthService') config.authService = authService;
  if (rateLimitService?.kind === 'RateLimitService') config.rateLimitService = rateLimitService;
  if (module?.kind === 'Module') config.module = module;
  if (tracing?.kind === 'TracingService') config.tracingService = tracing;
  if (recordSources.size > 0) config.recordSources = recordSources;
  if (tls.hosts.length > 0) config.hosts = tls.hosts;
  if (tls.tlsContexts.length > 0) config.tlsContexts = tls.tlsContexts;
  if (tls.secrets.length > 0) config.secrets = tls.secrets;
  return { ok: true, config };
}

/**
 * Validates records written in code (an embedding app's, a test's) into a
 * configuration: `configFromRecords([{apiVersion: 'gateway/v1', kind: 'Mapping', ...}])`.
 */
export function configFromRecords(records: readonly unknown[], source?: RecordSource): ConfigResult {
  return assembleConfig(
    records.map((value, i) => ({ value, source, index: i + 1 })),
    source ? [source.file] : [],
  );
}
