/**
 * @module gateway/upstream/service
 * What a Mapping's `service` names when it is no built-in module: a remote
 * upstream, written as Emissary writes it (`quote`, `quote.shop`,
 * `quote:8080`, `https://quote.shop`, `http://10.0.0.7:8080/base`), and the
 * DNS names it is looked up by, as Kubernetes resolves a Service's name.
 */
import { isIP } from 'node:net';

/** A remote upstream's address, parsed once. */
export interface ServiceAddress {
  readonly secure: boolean;
  /** The `Host` it is sent: host and port as written (`quote`, `quote:8080`). */
  readonly host: string;
  /** The host alone as written, an IPv6 address without brackets: the name TLS presents. */
  readonly hostname: string;
  /** The port as written, else the scheme's (80, or 443 for `https://`). */
  readonly port: number;
  /** A path every forwarded path is put under, without trailing slash; `''` for none. */
  readonly basePath: string;
  /** The names to look up, in order, the first that exists winning; empty for an IP address. */
  readonly lookups: readonly string[];
  /** The service as written, `https://` and a base path included, for messages and names. */
  readonly written: string;
}

/** One address of `endpoints`: a host (name or IP) and its port. */
export interface EndpointAddress {
  readonly hostname: string;
  readonly port: number;
  readonly lookups: readonly string[];
}

/** How names are qualified: Kubernetes' cluster domain, and the namespace of the record. */
export interface NameContext {
  /** Default `cluster.local`. */
  readonly clusterDomain: string;
  /** The record's `namespace`, if any. */
  readonly namespace?: string;
}

export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** A DNS name (RFC 1123 labels), a trailing dot allowed. */
const DNS_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
/** `host`, `host:port`, `[v6]` or `[v6]:port`. */
const HOST_AND_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^:/[\]]+)(?::([0-9]{1,5}))?$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/**
 * The names a host is looked up by, as a client in a Kubernetes pod would
 * find it: `quote` in the record's namespace (`quote.<namespace>.svc.<domain>`),
 * `quote.shop` as the Service `quote` of namespace `shop`
 * (`quote.shop.svc.<domain>`), each then as written, so that a name outside
 * Kubernetes (`example.com`, a Compose service) is still found. A name of
 * three labels or more, or ending in a dot, is looked up as written only.
 */
export function lookupNames(hostname: string, context: NameContext): string[] {
  if (isIP(hostname) !== 0) return [];
  const name = hostname.toLowerCase();
  if (name.endsWith('.')) return [name.slice(0, -1)];
  const dots = name.split('.').length - 1;
  const domain = context.clusterDomain;
  if (dots === 0 && context.namespace !== undefined) return [`${name}.${context.namespace}.svc.${domain}`, name];
  if (dots === 1) return [`${name}.svc.${domain}`, name];
  return [name];
}

/** `host[:port]` (or `[v6][:port]`): the host without brackets and the port, if written; undefined when it is neither. */
function splitHostPort(text: string): { hostname: string; port?: number } | undefined {
  const match = HOST_AND_PORT.exec(text);
  if (match === null) return undefined;
  let hostname = match[1];
  if (hostname.startsWith('[')) {
    hostname = hostname.slice(1, -1);
    if (isIP(hostname) !== 6) return undefined;
  } else if (isIP(hostname) === 0 && !DNS_NAME.test(hostname)) {
    return undefined;
  }
  if (match[2] === undefined) return { hostname };
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { hostname, port } : undefined;
}

/**
 * Parses a `service` that names a remote upstream. Returns `undefined` for
 * anything else: another scheme, credentials, a query or fragment, a port
 * outside 1-65535, a host that is no DNS name or IP address, a path without
 * a scheme (`quote/base`: write `http://quote/base`).
 */
export function parseServiceAddress(service: string, context: NameContext): ServiceAddress | undefined {
  const scheme = SCHEME.exec(service)?.[1].toLowerCase();
  if (scheme === undefined) {
    const parts = splitHostPort(service);
    if (parts === undefined) return undefined;
    const port = parts.port ?? 80;
    return {
      secure: false,
      host: service,
      hostname: parts.hostname,
      port,
      basePath: '',
      lookups: lookupNames(parts.hostname, context),
      written: service,
    };
  }
  if (scheme !== 'http' && scheme !== 'https') return undefined;
  if (/[?#@]/.test(service)) return undefined;
  const rest = service.slice(scheme.length + 3);
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const parts = splitHostPort(authority);
  if (parts === undefined) return undefined;
  const secure = scheme === 'https';
  const path = slash === -1 ? '' : rest.slice(slash);
  let basePath: string;
  try {
    // The URL parser normalises the path (dot segments, escapes) as it is sent.
    basePath = new URL(`http://h${path}`).pathname;
  } catch {
    return undefined;
  }
  if (basePath.endsWith('/')) basePath = basePath.slice(0, -1);
  const port = parts.port ?? (secure ? 443 : 80);
  const defaultPort = parts.port === undefined || parts.port === (secure ? 443 : 80);
  const bracketed = parts.hostname.includes(':') ? `[${parts.hostname}]` : parts.hostname;
  return {
    secure,
    host: defaultPort ? bracketed : `${bracketed}:${port}`,
    hostname: parts.hostname,
    port,
    basePath,
    lookups: lookupNames(parts.hostname, context),
    written: service,
  };
}

/** Parses one address of `endpoints`: `host[:port]` or `[v6][:port]`, the port `port` when left out. */
export function parseEndpointAddress(text: string, port: number, context: NameContext): EndpointAddress | undefined {
  const parts = splitHostPort(text);
  if (parts === undefined) return undefined;
  return { hostname: parts.hostname, port: parts.port ?? port, lookups: lookupNames(parts.hostname, context) };
}

/** The host of a `host[:port]`, for TLS to present; undefined for an IP address, which TLS does not present. */
export function tlsName(host: string): string | undefined {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:[0-9]*$/, '');
  return isIP(name) === 0 ? name : undefined;
}

/**
 * The name TLS presents to the upstream at `address`: the TLSContext's
 * `sni`, else that of `host_rewrite`, else the service's; none in the
 * clear, or for an IP address.
 */
export function servernameOf(
  address: ServiceAddress,
  sni: string | undefined,
  hostRewrite: string | undefined,
): string | undefined {
  if (!address.secure) return undefined;
  return sni ?? tlsName(hostRewrite ?? address.host);
}

/** `http(s)://host:port` of an address, an IPv6 one in brackets. */
export function originOf(secure: boolean, address: string, port: number): string {
  return `${secure ? 'https' : 'http'}://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
