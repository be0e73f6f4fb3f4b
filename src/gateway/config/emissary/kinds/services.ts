/**
 * @module gateway/config/emissary/kinds/services
 * Emissary's AuthService, RateLimitService and TracingService as the gateway's. The fields
 * the gateway's records share with Emissary's pass unchanged; what differs
 * is what a record that leaves a field out gets: Emissary's defaults
 * (no allowed authorization headers beyond Envoy's own, the rate-limit
 * domain `ambassador`), not the gateway's own form's.
 */
import { API_VERSION } from '../../schema';
import type { EmissaryResource, FieldNote, Translation } from '../types';
import { hostAndPort } from '../values';

const STATS = 'ignored: decisions are counted in the Prometheus metrics';
const EXPLICIT_TLS = 'ignored: how Emissary remembers the v2 spelling of tls; it changes nothing';
/** A TLSContext named by a service's `tls`: the service is called as the context says. */
const TLS_CONTEXT =
  "names a TLSContext: TLS to the service with the context's client certificate, its ca_secret (else the system's authorities), sni and protocol versions";

/** The fields of an AuthService that Emissary reads for `proto: http` alone, and what a gRPC check does instead. */
const HTTP_ONLY: Readonly<Record<string, string>> = {
  path_prefix: "the check carries the request's own path",
  add_auth_headers: "the check carries the request's own headers",
  add_linkerd_headers: 'the check is a gRPC call to the service itself',
};

/** A field that is false or empty: as if it were not written. */
function isUnset(value: unknown): boolean {
  return value === false || value === '' || value === null;
}

/**
 * A `service` without a port gets Emissary's: 443 with TLS, else 80. A bare
 * name in no namespace is left as it is: it may name a built-in module.
 */
function defaultPort(out: Record<string, unknown>, r: EmissaryResource, notes: FieldNote[]): void {
  const service = out.service;
  if (typeof service !== 'string' || service === '') return;
  const bare = service.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/.*$/, '');
  if (/:[0-9]+$/.test(bare) || bare.startsWith('[')) return;
  if (!bare.includes('.') && r.namespace === undefined && bare === service) return;
  const tls = out.tls === true || (typeof out.tls === 'string' && out.tls !== '') || /^https:\/\//i.test(service);
  const port = tls ? 443 : 80;
  out.service = `${bare}:${port}`;
  notes.push({
    field: 'service',
    note: `no port: ${port}, Emissary's default for a service ${tls ? 'with' : 'without'} TLS`,
  });
}

/** An Emissary AuthService as the gateway's. */
export function translateAuthService(r: EmissaryResource): Translation {
  const out: Record<string, unknown> = { apiVersion: API_VERSION, kind: 'AuthService', name: r.name };
  const notes: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    if (field === 'stats_name') notes.push({ field, note: STATS });
    else if (field === 'v2ExplicitTLS') notes.push({ field, note: EXPLICIT_TLS });
    else if (field === 'tls' && isUnset(value)) continue;
    else if (field === 'auth_service') out[field] = hostAndPort(field, value, notes);
    else out[field] = value;
  }
  if (typeof out.tls === 'string') notes.push({ field: 'tls', note: TLS_CONTEXT });
  if (out.proto === 'grpc') {
    if (out.protocol_version === undefined) {
      notes.push({
        field: 'protocol_version',
        note: 'not set: v3, the only protocol asked here; Emissary 3 takes v2 then, which it no longer speaks, and reports an error',
      });
    }
    notes.push({
      field: 'allowed_request_headers',
      note: 'every request header is sent in the check, as Envoy sends them to a gRPC service',
    });
    // Emissary writes these into the HTTP check alone; a gRPC check is sent without them.
    for (const [field, why] of Object.entries(HTTP_ONLY)) {
      if (out[field] === undefined) continue;
      delete out[field];
      notes.push({ field, note: `ignored for proto: grpc, as in Emissary: ${why}` });
    }
    if (out.allowed_authorization_headers !== undefined) {
      notes.push({
        field: 'allowed_authorization_headers',
        note: "ignored for proto: grpc, as in Emissary: the answer's ok_response says which headers the upstream gets",
      });
    }
    return { record: out, became: `AuthService ${r.name}`, notes, problems: [], serviceField: 'auth_service' };
  }
  if (out.allowed_authorization_headers === undefined) {
    // Emissary's default; the gateway's own form passes X-Travel-User, its auth service's header.
    out.allowed_authorization_headers = [];
    notes.push({
      field: 'allowed_authorization_headers',
      note: "not set: none, as in Emissary: of the auth service's answer only Authorization, Location, Proxy-Authenticate, Set-Cookie and WWW-Authenticate reach the upstream",
    });
  } else {
    notes.push({
      field: 'allowed_authorization_headers',
      note: "a client's own copy of each is dropped before the request goes on, even when the auth service does not set it (Emissary passes the client's then)",
    });
  }
  return { record: out, became: `AuthService ${r.name}`, notes, problems: [], serviceField: 'auth_service' };
}

/** An Emissary RateLimitService as the gateway's. */
export function translateRateLimitService(r: EmissaryResource): Translation {
  const out: Record<string, unknown> = { apiVersion: API_VERSION, kind: 'RateLimitService', name: r.name };
  const notes: FieldNote[] = [];
  const problems: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    if (field === 'stats_name') notes.push({ field, note: STATS });
    else if (field === 'v2ExplicitTLS') notes.push({ field, note: EXPLICIT_TLS });
    // `grpc: {use_resource_exhausted_code}`: the gRPC status of a gRPC call over a limit, as in Emissary.
    else if (field === 'grpc') out.grpc = value;
    else if (field === 'tls') {
      if (isUnset(value)) continue;
      out.tls = value;
      if (typeof value === 'string') notes.push({ field, note: TLS_CONTEXT });
    } else if (field === 'service') out[field] = hostAndPort(field, value, notes);
    else out[field] = value;
  }
  defaultPort(out, r, notes);
  if (out.protocol_version === undefined) {
    notes.push({
      field: 'protocol_version',
      note: 'not set: v3, the only protocol asked here; Emissary 3 takes v2 then, which it no longer speaks, and reports an error',
    });
  }
  if (out.domain === undefined) {
    out.domain = 'ambassador';
    notes.push({
      field: 'domain',
      note: "not set: ambassador, Emissary's default (and its Mappings' label domain); the gateway's own form defaults to gateway",
    });
  }
  return { record: out, became: `RateLimitService ${r.name}`, notes, problems, serviceField: 'service' };
}

/** An Emissary TracingService as the gateway's: its fields pass as they are, and the record's schema refuses what it cannot serve. */
export function translateTracingService(r: EmissaryResource): Translation {
  const out: Record<string, unknown> = { apiVersion: API_VERSION, kind: 'TracingService', name: r.name };
  const notes: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    out[field] = value;
    if (field === 'stats_name')
      notes.push({ field, note: 'ignored: spans dropped and exported are counted in the Prometheus metrics' });
    else if (field === 'tag_headers') notes.push({ field, note: 'read as custom_tags of those request headers' });
  }
  const sampling = r.fields.sampling;
  if (typeof sampling === 'object' && sampling !== null && 'client' in sampling) {
    notes.push({
      field: 'sampling.client',
      note: 'ignored: x-client-trace-id is not read; random and overall choose the new traces sampled',
    });
  }
  return { record: out, became: `TracingService ${r.name}`, notes, problems: [] };
}
