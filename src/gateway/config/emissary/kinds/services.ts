/**
 * @module gateway/config/emissary/kinds/services
 * Emissary's AuthService and RateLimitService as the gateway's. The fields
 * the gateway's records share with Emissary's pass unchanged; what differs
 * is what a record that leaves a field out gets: Emissary's defaults
 * (no allowed authorization headers beyond Envoy's own, the rate-limit
 * domain `ambassador`), not the gateway's own form's.
 */
import { API_VERSION } from '../../schema';
import type { EmissaryResource, FieldNote, Translation } from '../types';

const STATS = 'ignored: decisions are counted in the Prometheus metrics';
/** `grpc: {use_resource_exhausted_code}`: the gRPC status Emissary gives a gRPC request over a limit. */
const GRPC_CODE = 'ignored: gRPC requests are not proxied here, so none is answered with a gRPC status; a request over a limit gets 429';
const EXPLICIT_TLS = 'ignored: how Emissary remembers the v2 spelling of tls; it changes nothing';

/** A field that is false or empty: as if it were not written. */
function isUnset(value: unknown): boolean {
  return value === false || value === '' || value === null;
}

/** An Emissary AuthService as the gateway's. */
export function translateAuthService(r: EmissaryResource): Translation {
  const out: Record<string, unknown> = { apiVersion: API_VERSION, kind: 'AuthService', name: r.name };
  const notes: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    if (field === 'stats_name') notes.push({ field, note: STATS });
    else if (field === 'v2ExplicitTLS') notes.push({ field, note: EXPLICIT_TLS });
    else if (field === 'tls' && isUnset(value)) continue;
    else out[field] = value;
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
    else if (field === 'grpc') notes.push({ field, note: GRPC_CODE });
    else if (field === 'tls') {
      if (!isUnset(value)) out.tls = value;
    } else out[field] = value;
  }
  if (out.protocol_version === undefined) {
    notes.push({ field: 'protocol_version', note: 'not set: v3, the only protocol asked here; Emissary 3 takes v2 then, which it no longer speaks, and reports an error' });
  }
  if (out.domain === undefined) {
    out.domain = 'ambassador';
    notes.push({ field: 'domain', note: "not set: ambassador, Emissary's default (and its Mappings' label domain); the gateway's own form defaults to gateway" });
  }
  return { record: out, became: `RateLimitService ${r.name}`, notes, problems, serviceField: 'service' };
}
