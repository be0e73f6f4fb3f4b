/**
 * @module gateway/config/emissary/kinds/mapping
 * An Emissary Mapping (v3alpha1, v2 or v1) as the gateway's Mapping. Fields
 * of the same meaning pass unchanged, the upstream settings too (the
 * record's schema judges them); the fields only Emissary's storage or Envoy
 * needs are dropped with a note; v2's spellings (`host`, `tls: true`,
 * `{generic_key, v3Key}`) and v3alpha1's memories of them (`v2BoolHeaders`,
 * `v2Representation`) become the gateway's.
 */
import { API_VERSION } from '../../schema';
import type { EmissaryResource, FieldNote, Translation } from '../types';
import { addedHeaders, corsPolicy, hostAndPort, isPlainObject, keepaliveAsRead, labels } from '../values';

const HOST_HEADER =
  "not set: a remote upstream is sent its own host:port as Host, where Emissary sends the client's; the client's is in X-Forwarded-Host, and host_rewrite sends a name of your choice";

/** Fields dropped, and why: each changes nothing a client or upstream sees here. */
const DROPPED: Readonly<Record<string, string>> = {
  stats_name: 'ignored: requests are counted by Mapping name in the Prometheus metrics',
  v3StatsName: 'ignored: requests are counted by Mapping name in the Prometheus metrics',
  v2ExplicitTLS: 'ignored: how Emissary remembers the v2 spelling of tls and service; it changes nothing',
};

/** A translation under way: the record, and what is said of the fields. */
interface Draft {
  readonly out: Record<string, unknown>;
  readonly notes: FieldNote[];
  readonly problems: FieldNote[];
  readonly renamed: Record<string, string>;
  linkerd?: boolean;
}

/** Keeps the `true` (any value) entries of a v2 `headers` / `query_parameters` map, and drops `false`, which Emissary ignores. */
function boolOrString(field: string, raw: unknown, d: Draft): unknown {
  if (!isPlainObject(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === false)
      d.notes.push({ field: `${field}.${name}`, note: 'ignored: false asks nothing of the request, in Emissary too' });
    else out[name] = value;
  }
  return out;
}

/**
 * v3alpha1's `v2BoolHeaders` / `v2BoolQueryParameters`: the names v2 wrote
 * `true` for, which Emissary keeps as the pattern `.*` besides; each is
 * `true` (any value) here, and its `.*` dropped.
 */
function boolNames(d: Draft, names: unknown, exact: string, patterns: string, field: string): void {
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
    d.problems.push({ field, note: 'must be a list of names' });
    return;
  }
  const map = isPlainObject(d.out[exact]) ? { ...d.out[exact] } : {};
  const regex = isPlainObject(d.out[patterns]) ? { ...d.out[patterns] } : undefined;
  for (const name of names) {
    if (map[name] === undefined) map[name] = true;
    if (regex?.[name] === '.*') delete regex[name];
  }
  d.out[exact] = map;
  if (regex !== undefined) {
    if (Object.keys(regex).length > 0) d.out[patterns] = regex;
    else delete d.out[patterns];
  }
}

/** `tls` of a Mapping: v2's `true` is the `https://` of its service; a name is the TLSContext the upstream is called with. */
function upstreamTls(value: unknown, d: Draft): void {
  if (value === true) {
    const service = d.out.service;
    if (typeof service === 'string')
      d.out.service = /^https:\/\//i.test(service) ? service : `https://${service.replace(/^http:\/\//i, '')}`;
    d.notes.push({ field: 'tls', note: 'read as the https:// of service: TLS to the upstream' });
  } else if (typeof value === 'string' && value !== '') d.out.tls = value;
  else if (value !== false && value !== '' && value !== null)
    d.problems.push({ field: 'tls', note: 'must be true, false or the name of a TLSContext' });
}

/** The fields that differ in spelling or meaning; every other field passes as it is. */
function translateField(field: string, value: unknown, r: EmissaryResource, d: Draft): void {
  switch (field) {
    case 'host':
      if (r.fields.hostname !== undefined) {
        d.notes.push({ field, note: 'ignored: hostname is given too, and wins, as in Emissary (which logs the same)' });
        return;
      }
      // v2's host is v3alpha1's hostname (a glob) unless host_regex makes it a pattern, as Emissary converts it.
      if (r.version !== 'v3alpha1' && r.fields.host_regex !== true) {
        d.out.hostname = value;
        d.renamed.hostname = 'host';
        d.notes.push({
          field,
          note: 'read as hostname (a DNS glob), as Emissary converts a v2 host that host_regex does not make a pattern',
        });
      } else d.out.host = value;
      return;
    case 'host_regex':
      if (r.fields.hostname !== undefined && r.fields.host !== undefined)
        d.notes.push({ field, note: 'ignored with host, which hostname overrides' });
      else if (r.version === 'v3alpha1' || value === true) d.out.host_regex = value;
      return;
    case 'headers':
    case 'query_parameters':
      d.out[field] = boolOrString(field, value, d);
      return;
    case 'add_request_headers':
    case 'add_response_headers':
      d.out[field] = addedHeaders(value);
      return;
    case 'cors':
      d.out.cors = corsPolicy(value);
      return;
    case 'labels':
      // A resource reaches Emissary as Kubernetes stored it, its unknown keys pruned; an annotation as written.
      d.out.labels =
        r.fieldPrefix === 'spec.'
          ? labels(value, (path, names) =>
              d.notes.push({
                field: `labels.${path}`,
                note: `${names.join(', ')} dropped, as Kubernetes prunes a key the label's schema does not know: read as the action beside it, as Emissary reads it`,
              }),
            )
          : labels(value);
      return;
    case 'service':
      d.out.service = hostAndPort(field, value, d.notes);
      return;
    case 'keepalive':
      d.out.keepalive = keepaliveAsRead(field, value, d.notes);
      return;
    case 'auth_context_extensions':
      d.out[field] = value;
      d.notes.push({
        field,
        note: 'sent as the context_extensions of a check to an AuthService with proto: grpc; an HTTP check carries none, as in Emissary',
      });
      return;
    case 'add_linkerd_headers':
      if (typeof value === 'boolean') d.linkerd = value;
      else d.problems.push({ field, note: 'must be true or false' });
      return;
    case 'grpc':
      if (value === false) d.notes.push({ field, note: 'ignored: false is the default' });
      else d.out.grpc = value;
      return;
    case 'auto_host_rewrite':
      if (value === true) d.out.auto_host_rewrite = true;
      else d.notes.push({ field, note: HOST_HEADER.replace(/^not set/, `${String(value)}`) });
      return;
    case 'docs':
      d.out.docs = value;
      d.notes.push({ field, note: 'accepted, no effect: the gateway has no developer portal to list the API in' });
      return;
    case 'health_checks':
    case 'v3health_checks':
      d.problems.push({ field, note: 'not supported: upstreams are not health-checked actively; remove the field' });
      return;
    case 'tls':
    case 'v2BoolHeaders':
    case 'v2BoolQueryParameters':
      return; // read once the other fields are in place
    default:
      if (field in DROPPED) d.notes.push({ field, note: DROPPED[field] });
      else d.out[field] = value;
  }
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * What a Mapping matched by a pattern needs beside it to forward the paths
 * its prefix did: a `rewrite` of a pattern's match replaces the whole path
 * (as Envoy's prefix_rewrite does after a regex match), so a prefix's
 * rewrite, the default `/` included, becomes a regex_rewrite of the prefix.
 */
function keepingRewrite(prefix: string, rewrite: unknown): string {
  if (rewrite === '') return ", and keep rewrite: ''";
  const target = typeof rewrite === 'string' ? rewrite : '/';
  const substitution = `${target.endsWith('/') ? target : `${target}/`}\\1`;
  return ` and regex_rewrite: {pattern: '^${escapeRegex(prefix)}/?(.*)$', substitution: '${substitution}'}, since with a pattern rewrite replaces the whole path`;
}

/** Notes on what a Mapping gets otherwise than in Emissary, whatever it says. */
function differences(d: Draft): void {
  const { prefix, prefix_regex: regex, prefix_exact: exact } = d.out;
  if (typeof prefix === 'string' && regex !== true && exact !== true && !prefix.endsWith('/')) {
    d.notes.push({
      field: 'prefix',
      note: `matches on segment boundaries: ${prefix} matches ${prefix}/x, not ${prefix}x (Emissary: any path that starts with it); for Emissary's match write prefix_regex: true with prefix: '${escapeRegex(prefix)}.*'${keepingRewrite(prefix, d.out.rewrite)}`,
    });
  }
  if (d.out.host_rewrite === undefined && d.out.auto_host_rewrite !== true && d.out.host_redirect !== true) {
    if (!d.notes.some((n) => n.field === 'auto_host_rewrite'))
      d.notes.push({ field: 'auto_host_rewrite', note: HOST_HEADER });
  }
}

/** An Emissary Mapping as the gateway's. */
export function translateMapping(r: EmissaryResource): Translation {
  const d: Draft = {
    out: { apiVersion: API_VERSION, kind: 'Mapping', name: r.name },
    notes: [],
    problems: [],
    renamed: {},
  };
  if (r.labels !== undefined && r.fields.metadata_labels === undefined) d.out.metadata_labels = r.labels;
  for (const [field, value] of Object.entries(r.fields)) translateField(field, value, r, d);
  if ('tls' in r.fields) upstreamTls(r.fields.tls, d);
  if ('v2BoolHeaders' in r.fields) boolNames(d, r.fields.v2BoolHeaders, 'headers', 'regex_headers', 'v2BoolHeaders');
  if ('v2BoolQueryParameters' in r.fields)
    boolNames(d, r.fields.v2BoolQueryParameters, 'query_parameters', 'regex_query_parameters', 'v2BoolQueryParameters');
  differences(d);
  return {
    record: d.out,
    became: `Mapping ${r.name}`,
    notes: d.notes,
    problems: d.problems,
    renamed: d.renamed,
    serviceField: 'service',
    ...(d.linkerd !== undefined ? { linkerdHeaders: d.linkerd } : {}),
  };
}
