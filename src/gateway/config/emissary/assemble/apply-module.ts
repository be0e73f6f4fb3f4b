/**
 * @module gateway/config/emissary/assemble/apply-module
 * What the served records take from each other before they are validated,
 * as Emissary builds them: an upstream's Kubernetes name qualified with the
 * record's namespace, the ambassador Module's defaults in every Mapping
 * without its own (header edits, `timeout_ms`, upstream settings), its
 * default labels first in every label group (or as the only group of a
 * Mapping without labels), the Linkerd header, and a name given twice in
 * two namespaces told apart. Every Mapping takes the Module's settings,
 * whichever form it is written in: the Module is the gateway's.
 */
import type { SelectedRecord } from './select';
import type { FieldNote, ModuleSettings } from '../types';
import { isPlainObject, qualifiedService, serviceHostPort } from '../values';

/** What was done to the records: notes for the report, and the Mapping fields that came from the Module. */
export interface Applied {
  readonly notes: Map<SelectedRecord, FieldNote[]>;
  /** For each record, its fields that the Module gave, and the Module field each came from. */
  readonly injected: Map<SelectedRecord, Map<string, string>>;
  /** For each record, how many of the Module's default labels were put first in each group of a domain, by domain. */
  readonly prepended: Map<SelectedRecord, Map<string, number>>;
}

function noteOn(applied: Applied, record: SelectedRecord, field: string, note: string): void {
  const notes = applied.notes.get(record) ?? [];
  const prefix = record.emissary?.fieldPrefix ?? '';
  notes.push({ field: field === '' ? (prefix === 'spec.' ? 'metadata.name' : 'name') : `${prefix}${field}`, note });
  applied.notes.set(record, notes);
}

function inject(applied: Applied, record: SelectedRecord, field: string, from: string): void {
  const fields = applied.injected.get(record) ?? new Map<string, string>();
  fields.set(field, from);
  applied.injected.set(record, fields);
}

/** `service` (or `auth_service`) of an Emissary record in a namespace, qualified with it as Emissary does. */
function qualify(
  record: SelectedRecord,
  value: Record<string, unknown>,
  module: ModuleSettings | undefined,
  applied: Applied,
): void {
  const origin = record.emissary;
  const field = origin?.serviceField;
  if (!origin || !field || origin.namespace === undefined || module?.ownNamespace) return;
  const service = value[field];
  if (typeof service !== 'string') return;
  const qualified = qualifiedService(service, origin.namespace);
  if (qualified === service) return;
  value[field] = qualified;
  noteOn(
    applied,
    record,
    field,
    `${qualified}: a name is qualified with the namespace of its resource (${origin.namespace}), as Emissary resolves it`,
  );
}

/** The default labels first in each group of a Mapping's domains, or as its only group when it has no labels. */
function defaultLabels(
  record: SelectedRecord,
  value: Record<string, unknown>,
  module: ModuleSettings,
  applied: Applied,
): void {
  const labels = value.labels;
  if (!isPlainObject(labels) || Object.keys(labels).length === 0) {
    const domain = module.defaultLabelDomain;
    const defaults = module.defaultLabels[domain];
    if (!defaults) return;
    value.labels = { [domain]: [{ defaults: structuredClone(defaults) }] };
    inject(applied, record, 'labels', `config.default_labels.${domain}`);
    noteOn(applied, record, 'labels', `from the ambassador Module's default_labels (domain ${domain})`);
    return;
  }
  for (const [domain, groups] of Object.entries(labels)) {
    const defaults = module.defaultLabels[domain];
    if (!defaults || !Array.isArray(groups)) continue;
    labels[domain] = groups.map((group: unknown) => {
      if (!isPlainObject(group) || Object.keys(group).length !== 1) return group;
      const [name, list] = Object.entries(group)[0];
      // Emissary leaves the groups it made of a v0 rate_limits alone.
      if (name.startsWith('v0_ratelimit_') || !Array.isArray(list)) return group;
      return { [name]: [...structuredClone(defaults), ...(list as unknown[])] };
    });
    const counts = applied.prepended.get(record) ?? new Map<string, number>();
    counts.set(domain, defaults.length);
    applied.prepended.set(record, counts);
    noteOn(applied, record, `labels.${domain}`, "each group starts with the ambassador Module's default_labels");
  }
}

/** The Module's settings in one Mapping. */
function mappingDefaults(
  record: SelectedRecord,
  value: Record<string, unknown>,
  module: ModuleSettings,
  applied: Applied,
): void {
  for (const [field, { value: fallback, from }] of Object.entries(module.mappingDefaults)) {
    if (field in value) continue;
    value[field] = structuredClone(fallback);
    inject(applied, record, field, from);
    noteOn(applied, record, field, `from the ambassador Module's ${from.replace(/^config\./, '')}`);
  }
  defaultLabels(record, value, module, applied);
}

/** `l5d-dst-override: <host>:<port>` of the service, as Emissary adds it for Linkerd. */
function linkerdHeader(
  record: SelectedRecord,
  value: Record<string, unknown>,
  module: ModuleSettings | undefined,
  applied: Applied,
): void {
  const own = record.emissary?.linkerdHeaders;
  if (!(own ?? module?.linkerdHeaders)) return;
  const target = typeof value.service === 'string' ? serviceHostPort(value.service) : undefined;
  const added = value.add_request_headers ?? {};
  if (target === undefined || !isPlainObject(added)) return;
  value.add_request_headers = { ...added, 'l5d-dst-override': { value: target, append: false } };
  noteOn(
    applied,
    record,
    'add_linkerd_headers',
    `adds l5d-dst-override: ${target}${own === undefined ? " (the ambassador Module's)" : ''}`,
  );
}

/** Emissary's resources of one kind and name in two namespaces: the later ones named `<name>.<namespace>`, as Emissary names them. */
function distinctNames(records: readonly SelectedRecord[], applied: Applied): void {
  const seen = new Map<string, string | undefined>();
  for (const record of records) {
    const origin = record.emissary;
    if (!origin || !isPlainObject(record.value)) continue;
    const key = `${origin.kind}\0${origin.name}`;
    if (!seen.has(key)) {
      seen.set(key, origin.namespace);
      continue;
    }
    if (seen.get(key) === origin.namespace || origin.namespace === undefined) continue;
    const name = `${origin.name}.${origin.namespace}`;
    record.value.name = name;
    noteOn(
      applied,
      record,
      '',
      `named ${name}: another ${origin.kind} in namespace ${seen.get(key) ?? '(none)'} is named ${origin.name}`,
    );
  }
}

/** The Module's settings (the first ambassador Module's, if any) and the namespaces, applied to the served records. */
export function applyModule(records: readonly SelectedRecord[]): Applied {
  const applied: Applied = { notes: new Map(), injected: new Map(), prepended: new Map() };
  const module = records.find((r) => r.emissary?.module !== undefined)?.emissary?.module;
  for (const record of records) {
    const value = record.value;
    if (!isPlainObject(value)) continue;
    qualify(record, value, module, applied);
    if (value.kind !== 'Mapping') continue;
    if (module) mappingDefaults(record, value, module, applied);
    linkerdHeader(record, value, module, applied);
  }
  distinctNames(records, applied);
  return applied;
}
