/**
 * @module test/support/emissary
 * Emissary resources written as an Emissary user writes them, in either
 * form: a resource (`apiVersion: getambassador.io/v3alpha1`, `metadata`,
 * `spec`) or a flat record of the `getambassador.io/config` annotation of a
 * Service; loaded as the config folder's files are, and served by a gateway
 * on a real port in front of a recording upstream.
 */
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { parseConfigFiles, type GatehouseModule, type LoadedConfig } from '../../src/gateway';
import { configRig, type Rig } from './routing-rig';

/** One Emissary resource: its kind, name, namespace, fields and the apiVersion of the form it is written in. */
export interface Fixture {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly spec: Record<string, unknown>;
  /** Default `getambassador.io/v3alpha1` for a resource, `getambassador.io/v2` for the annotation. */
  readonly apiVersion?: string;
}

/** The two forms an Emissary user writes resources in. */
export type Form = 'resource' | 'annotation';
export const FORMS: readonly Form[] = ['resource', 'annotation'];

/** Resources as Kubernetes documents, separated by `---`. */
export function asResources(...fixtures: Fixture[]): string {
  return fixtures
    .map((f) =>
      stringify({
        apiVersion: f.apiVersion ?? 'getambassador.io/v3alpha1',
        kind: f.kind,
        metadata: { name: f.name, ...(f.namespace ? { namespace: f.namespace } : {}) },
        spec: f.spec,
      }),
    )
    .join('---\n');
}

/** Resources as flat records in the `getambassador.io/config` annotation of a Service named `service`. */
export function asAnnotation(service: string, ...fixtures: Fixture[]): string {
  const records = fixtures
    .map((f) =>
      stringify({
        apiVersion: f.apiVersion ?? 'getambassador.io/v2',
        kind: f.kind,
        name: f.name,
        ...(f.namespace ? { namespace: f.namespace } : {}),
        ...f.spec,
      }),
    )
    .join('---\n');
  return stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: service, annotations: { 'getambassador.io/config': records } },
    spec: { ports: [{ port: 80 }] },
  });
}

/** The fixtures in `form`. */
export function written(form: Form, ...fixtures: Fixture[]): string {
  return form === 'resource' ? asResources(...fixtures) : asAnnotation('emissary', ...fixtures);
}

/** The file a test's resources are read from. */
export const FILE = 'config/emissary.yaml';

/** Loads `text` as the config folder's only file. */
export function load(text: string, ambassadorId?: string): LoadedConfig {
  return parseConfigFiles([{ file: FILE, text }], { ambassadorId });
}

/** Loads `text`, failing the test when it is refused. */
export function loaded(text: string, ambassadorId?: string): LoadedConfig & { ok: true } {
  const result = load(text, ambassadorId);
  if (!result.ok) assert.fail(result.problems.map((p) => p.text).join('\n'));
  return result;
}

/** The problems of `text`, failing the test when it loads. */
export function problems(text: string, ambassadorId?: string): string[] {
  const result = load(text, ambassadorId);
  assert.equal(result.ok, false, 'the config should have been refused');
  return result.ok ? [] : result.problems.map((p) => p.text);
}

/** The notes `gatehouse check` gives of a resource, `field: note` each. */
export function notesOf(result: LoadedConfig, name: string): string[] {
  const report = result.emissary?.records.find((r) => r.name === name);
  assert.ok(report, `no report of ${name}`);
  return report.notes.map((n) => `${n.field}: ${n.note}`);
}

export type { Routed, Rig as EmissaryRig } from './routing-rig';

/**
 * A gateway serving `text(upstream)` (the upstream's `host:port`), in front
 * of a recording upstream that answers with the request's `X-Route`.
 */
export function emissaryRig(
  text: (upstream: string) => string,
  modules: Map<string, GatehouseModule> = new Map(),
): Promise<Rig> {
  return configRig((upstream) => loaded(text(upstream)).config, { modules });
}

/** A Mapping fixture to the upstream, marking what it forwards with `X-Route: <name>`. */
export function routeTo(
  upstream: string,
  name: string,
  spec: Record<string, unknown>,
  extra: Partial<Fixture> = {},
): Fixture {
  const added = (spec.add_request_headers as Record<string, unknown> | undefined) ?? {};
  return {
    kind: 'Mapping',
    name,
    ...extra,
    spec: { service: upstream, ...spec, add_request_headers: { 'X-Route': name, ...added } },
  };
}
