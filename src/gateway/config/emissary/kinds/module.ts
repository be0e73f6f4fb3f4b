/**
 * @module gateway/config/emissary/kinds/module
 * Emissary's ambassador Module as the gateway's Module (`cors`,
 * `regex_max_size`, `enable_grpc_web`) and the settings the configuration as a whole takes
 * from it: `defaults` (the header edits of Mappings without their own),
 * `default_labels` and `default_label_domain`, `cluster_request_timeout_ms`
 * (Mappings' `timeout_ms`), `add_linkerd_headers`,
 * `use_ambassador_namespace_for_service_resolution`, and the upstream
 * settings every Mapping without its own takes. Every other field is
 * ignored or refused by name (module-fields). A Module of another name is
 * read as Emissary reads it: the `tls` Module is refused, any other ignored.
 */
import { labelsSchema } from '../../labels';
import { API_VERSION } from '../../schema';
import { DEFAULTABLE, IGNORED, REFUSED, REFUSED_WHEN_TRUE, UPSTREAM_DEFAULTS } from './module-fields';
import type { EmissaryResource, FieldNote, ModuleDefault, Translation } from '../types';
import { addedHeaders, corsPolicy, isPlainObject, keepaliveAsRead, labelList } from '../values';

interface Draft {
  readonly config: Record<string, unknown>;
  readonly notes: FieldNote[];
  readonly problems: FieldNote[];
  readonly defaults: Record<string, ModuleDefault>;
  defaultLabels: Record<string, readonly unknown[]>;
  defaultLabelDomain: string;
  linkerdHeaders: boolean;
  ownNamespace: boolean;
}

/** A header edit of `defaults`, in the spelling the gateway reads. */
function defaultValue(field: string, value: unknown): unknown {
  return field.startsWith('add_') ? addedHeaders(value) : value;
}

/** `defaults`: the `httpmapping` class first, then the top level, for the four fields Emissary 3 takes from it. */
function readDefaults(raw: unknown, d: Draft): void {
  if (!isPlainObject(raw)) {
    d.problems.push({
      field: 'config.defaults',
      note: 'expected a mapping: {httpmapping: {add_request_headers: ...}}',
    });
    return;
  }
  for (const [key, value] of Object.entries(raw)) {
    const at = `config.defaults.${key}`;
    if (DEFAULTABLE.includes(key)) {
      d.defaults[key] ??= { value: defaultValue(key, value), from: at };
    } else if (key === 'httpmapping' && isPlainObject(value)) {
      for (const [field, fieldValue] of Object.entries(value)) {
        if (DEFAULTABLE.includes(field))
          d.defaults[field] = { value: defaultValue(field, fieldValue), from: `${at}.${field}` };
        else
          d.notes.push({
            field: `${at}.${field}`,
            note: `ignored: Mappings take only ${DEFAULTABLE.join(', ')} from defaults, in Emissary too`,
          });
      }
    } else {
      d.notes.push({
        field: at,
        note: 'ignored: only Mappings read defaults, from the httpmapping class or the top level, in Emissary too',
      });
    }
  }
}

/** `default_labels: {<domain>: {defaults: [<label>...]}}`, each label checked as a Mapping's would be. */
function readDefaultLabels(raw: unknown, d: Draft): void {
  if (!isPlainObject(raw)) {
    d.problems.push({
      field: 'config.default_labels',
      note: 'expected a mapping: {<domain>: {defaults: [<label>, ...]}}',
    });
    return;
  }
  for (const [domain, entry] of Object.entries(raw)) {
    const at = `config.default_labels.${domain}`;
    if (!isPlainObject(entry) || !Array.isArray(entry.defaults)) {
      d.problems.push({ field: at, note: 'expected {defaults: [<label>, ...]}' });
      continue;
    }
    for (const key of Object.keys(entry))
      if (key !== 'defaults') d.notes.push({ field: `${at}.${key}`, note: 'ignored: Emissary reads defaults alone' });
    const list = labelList(entry.defaults) as unknown[];
    if (list.length === 0) continue;
    const checked = labelsSchema.safeParse({ [domain]: [{ defaults: list }] });
    if (checked.success) d.defaultLabels[domain] = list;
    else
      for (const issue of checked.error.issues)
        d.problems.push({ field: [at, ...issue.path.slice(2)].join('.'), note: issue.message });
  }
}

function boolean(field: string, value: unknown, d: Draft): boolean {
  if (typeof value === 'boolean') return value;
  d.problems.push({ field: `config.${field}`, note: 'must be true or false' });
  return false;
}

/** One field of `config`. */
function readField(field: string, value: unknown, d: Draft): void {
  const at = `config.${field}`;
  switch (field) {
    case 'cors':
      d.config.cors = corsPolicy(value);
      return;
    case 'regex_max_size':
    case 'suppress_envoy_headers':
    case 'enable_grpc_web':
    case 'ip_allow':
    case 'ip_deny':
    case 'error_response_overrides':
      d.config[field] = value;
      return;
    case 'defaults':
      readDefaults(value, d);
      return;
    case 'default_labels':
      readDefaultLabels(value, d);
      return;
    case 'default_label_domain':
      if (typeof value === 'string' && value !== '') d.defaultLabelDomain = value;
      else d.problems.push({ field: at, note: 'must be a domain name' });
      return;
    case 'cluster_request_timeout_ms':
      d.defaults.timeout_ms = { value, from: at };
      return;
    case 'add_linkerd_headers':
      d.linkerdHeaders = boolean(field, value, d);
      return;
    case 'use_ambassador_namespace_for_service_resolution':
      d.ownNamespace = boolean(field, value, d);
      return;
    case 'forward_client_cert_details':
    case 'set_current_client_cert_details':
      d.config[field] = value;
      return;
  }
  if (field === 'keepalive') d.defaults.keepalive = { value: keepaliveAsRead(at, value, d.notes), from: at };
  else if (field in UPSTREAM_DEFAULTS && value !== UPSTREAM_DEFAULTS[field]) d.defaults[field] = { value, from: at };
  else if (field in REFUSED) d.problems.push({ field: at, note: REFUSED[field] });
  else if (field in REFUSED_WHEN_TRUE) {
    if (value === true) d.problems.push({ field: at, note: REFUSED_WHEN_TRUE[field] });
  } else if (field in IGNORED) d.notes.push({ field: at, note: IGNORED[field] });
  else d.problems.push({ field: at, note: "unknown field: not one of Emissary's ambassador Module" });
}

/** An Emissary Module as the gateway's, with the settings it gives the rest. */
export function translateModule(r: EmissaryResource): Translation {
  if (r.name === 'tls') {
    return {
      became: 'nothing',
      notes: [],
      problems: [
        {
          field: '',
          note: 'the tls Module is not read: write a Host with tlsSecret, or a TLSContext, for each certificate',
        },
      ],
    };
  }
  if (r.name !== 'ambassador') {
    return {
      became: 'nothing: Emissary reads only the Module named ambassador, and ignores this one too',
      notes: [],
      problems: [],
    };
  }
  const d: Draft = {
    config: {},
    notes: [],
    problems: [],
    defaults: {},
    defaultLabels: {},
    defaultLabelDomain: 'ambassador',
    linkerdHeaders: false,
    ownNamespace: false,
  };
  for (const field of Object.keys(r.fields)) {
    if (field !== 'config') d.problems.push({ field, note: 'unknown field: a Module holds its settings in config' });
  }
  const config = r.fields.config ?? {};
  if (!isPlainObject(config)) d.problems.push({ field: 'config', note: 'expected a mapping of settings' });
  else for (const [field, value] of Object.entries(config)) readField(field, value, d);
  return {
    record: { apiVersion: API_VERSION, kind: 'Module', name: r.name, config: d.config },
    became: `Module ${r.name}`,
    notes: d.notes,
    problems: d.problems,
    module: {
      mappingDefaults: d.defaults,
      defaultLabels: d.defaultLabels,
      defaultLabelDomain: d.defaultLabelDomain,
      linkerdHeaders: d.linkerdHeaders,
      ownNamespace: d.ownNamespace,
    },
  };
}
