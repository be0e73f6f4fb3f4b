/**
 * @module gateway/config/emissary/kinds/other-kinds
 * Emissary's kinds that become no record: read where what they ask is what
 * the gateway does anyway (a Listener, a resolver, the log service), each
 * field said to be ignored; refused by name where it is not (TCP, Ambassador
 * Edge Stack's filters). Host and TLSContext are records (./tls-kinds).
 */
import type { EmissaryResource, Translation } from '../types';

const HOSTS = 'ignored: every Host is served on every port the gateway listens on';
const LISTENER =
  'ignored: the gateway listens where its --host, --port and --https-port (HOST, PORT, HTTPS_PORT) say, HTTPS as soon as a Host or TLSContext has a certificate';

/** What each field of a Listener stands for here. */
const LISTENER_FIELDS: Readonly<Record<string, string>> = {
  port: LISTENER,
  protocol: LISTENER,
  protocolStack: LISTENER,
  securityModel:
    'ignored: a request is secure when it came over TLS, or, with the trustProxy option, when the proxy in front says so in X-Forwarded-Proto',
  l7Depth: 'ignored: X-Forwarded-For is trusted only with the trustProxy option (one hop)',
  hostBinding: HOSTS,
  statsPrefix: 'ignored: metrics are served for Prometheus at /gateway/v0/metrics',
};

/** A Listener: what the gateway's own options set. */
function listener(r: EmissaryResource): Translation {
  const notes = Object.keys(r.fields).map((field) => ({ field, note: LISTENER_FIELDS[field] ?? 'ignored' }));
  return { became: 'nothing: the gateway listens as its options say', notes, problems: [] };
}

/** Refused: a kind whose absence a client or upstream would feel. */
const refused = (why: string) => (): Translation => ({
  became: 'nothing',
  notes: [],
  problems: [{ field: '', note: why }],
});

/** Read and ignored: a kind that changes nothing a client or upstream sees. */
const ignored = (became: string) => (): Translation => ({ became, notes: [], problems: [] });

const EDGE_STACK =
  'not supported: an Ambassador Edge Stack kind, whose authentication or limits would not be applied: use an AuthService and Mapping labels instead';

/** Translators of the kinds that become no record. */
export const OTHER_KINDS: Readonly<Record<string, (r: EmissaryResource) => Translation>> = {
  Listener: listener,
  TCPMapping: refused(
    'not supported: TCP connections are not proxied, only HTTP: remove the resource, or serve its port otherwise',
  ),
  KubernetesServiceResolver: ignored(
    'nothing: upstreams are resolved by their Kubernetes service name (DNS), as this resolver does',
  ),
  KubernetesEndpointResolver: ignored(
    'nothing: a Mapping whose resolver names it is refused (list addresses in endpoints)',
  ),
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
