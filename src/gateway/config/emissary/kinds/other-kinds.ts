/**
 * @module gateway/config/emissary/kinds/other-kinds
 * Emissary's kinds that become no record: read where what they ask is what
 * the gateway does anyway (a Listener, a Host without TLS, a resolver, the
 * log service), each field said to be ignored; refused by name
 * where it is not (TLS termination, TCP, Ambassador Edge Stack's filters).
 */
import type { EmissaryResource, FieldNote, Translation } from '../types';
import { isPlainObject } from '../values';

const TLS =
  'not supported: TLS is served with --tls-cert and --tls-key (TLS_CERT, TLS_KEY): give them the Secret\'s tls.crt and tls.key, and remove the field';
const HOSTS = "ignored: every host is served, and a Mapping's hostname chooses the hosts it takes";
const LISTENER = 'ignored: the gateway listens where its --host and --port (HOST, PORT) say, with TLS when --tls-cert and --tls-key give it';

/** What each field of a Listener stands for here. */
const LISTENER_FIELDS: Readonly<Record<string, string>> = {
  port: LISTENER,
  protocol: LISTENER,
  protocolStack: LISTENER,
  securityModel: 'ignored: a request is secure when it came over TLS, or, with the trustProxy option, when the proxy in front says so in X-Forwarded-Proto',
  l7Depth: 'ignored: X-Forwarded-For is trusted only with the trustProxy option (one hop)',
  hostBinding: HOSTS,
  statsPrefix: 'ignored: metrics are served for Prometheus at /gateway/v0/metrics',
};

/** A Listener: what the gateway's own options set. */
function listener(r: EmissaryResource): Translation {
  const notes = Object.keys(r.fields).map((field) => ({ field, note: LISTENER_FIELDS[field] ?? 'ignored' }));
  return { became: 'nothing: the gateway listens as its options say', notes, problems: [] };
}

/** The `requestPolicy` of a Host: routing insecure requests is what the gateway does. */
function requestPolicy(value: unknown, notes: FieldNote[], problems: FieldNote[]): void {
  const insecure = isPlainObject(value) && isPlainObject(value.insecure) ? value.insecure : {};
  const action = insecure.action;
  if (action !== undefined && action !== 'Route') {
    problems.push({ field: 'requestPolicy.insecure.action', note: `not supported: ${typeof action === 'string' ? action : JSON.stringify(action)}: requests are served over the scheme the gateway listens with; write Route, or remove the field` });
  }
  if (insecure.additionalPort !== undefined) notes.push({ field: 'requestPolicy.insecure.additionalPort', note: LISTENER });
}

/** A Host: served when it asks for no TLS and chooses no Mappings by label. */
function host(r: EmissaryResource): Translation {
  const notes: FieldNote[] = [];
  const problems: FieldNote[] = [];
  for (const [field, value] of Object.entries(r.fields)) {
    if (field === 'hostname') notes.push({ field, note: HOSTS });
    else if (field === 'tlsSecret' || field === 'tls' || field === 'tlsContext') problems.push({ field, note: TLS });
    else if (field === 'requestPolicy') requestPolicy(value, notes, problems);
    else if (field === 'mappingSelector' || field === 'selector') {
      problems.push({ field, note: "not supported: Mappings are not chosen by label; each takes the hosts its hostname matches; remove the field" });
    } else if (field === 'acmeProvider') {
      if (!isPlainObject(value) || value.authority !== 'none') notes.push({ field, note: "ignored: certificates are not requested by ACME (Ambassador Edge Stack's)" });
    } else notes.push({ field, note: 'ignored' });
  }
  return { became: 'nothing: every host is served', notes, problems };
}

/** Refused: a kind whose absence a client or upstream would feel. */
const refused = (why: string) => (): Translation => ({ became: 'nothing', notes: [], problems: [{ field: '', note: why }] });

/** Read and ignored: a kind that changes nothing a client or upstream sees. */
const ignored = (became: string) => (): Translation => ({ became, notes: [], problems: [] });

const EDGE_STACK = 'not supported: an Ambassador Edge Stack kind, whose authentication or limits would not be applied: use an AuthService and Mapping labels instead';

/** Translators of the kinds that become no record. */
export const OTHER_KINDS: Readonly<Record<string, (r: EmissaryResource) => Translation>> = {
  Listener: listener,
  Host: host,
  TLSContext: refused(TLS),
  TCPMapping: refused('not supported: TCP connections are not proxied, only HTTP: remove the resource, or serve its port otherwise'),
  KubernetesServiceResolver: ignored('nothing: upstreams are resolved by their Kubernetes service name (DNS), as this resolver does'),
  KubernetesEndpointResolver: ignored('nothing: a Mapping whose resolver names it is refused (list addresses in endpoints)'),
  ConsulResolver: ignored('nothing: a Mapping whose resolver names it is refused (list addresses in endpoints)'),
  LogService: ignored('nothing: the access log is written on stdout, one JSON line a request'),
  DevPortal: ignored("nothing: Ambassador Edge Stack's developer portal"),
  AmbassadorInstallation: ignored("nothing: the Ambassador operator's installation of Emissary itself"),
  Filter: refused(EDGE_STACK),
  FilterPolicy: refused(EDGE_STACK),
  RateLimit: refused(EDGE_STACK),
  WebApplicationFirewall: refused(EDGE_STACK),
  WebApplicationFirewallPolicy: refused(EDGE_STACK),
};
